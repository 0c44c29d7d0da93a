import Ajv, { type ValidateFunction } from 'ajv';
import { OBJECT_ID_PATTERN } from '../../../core/constants';
import {
  AccessDeniedError,
  AgentValidationError,
  ParseAgentConfigError,
} from '../../../core/errors';
import type { AgentMethodDeclaration } from '../../../metadata/metadata.types';
import type { DataRow } from '../../../ports/data-path';
import { isPlainObject } from '../../../query/field-names';
import { andWhere } from '../../../query/where-composer';
import { clpGrants, type ClpOperation } from '../../../security/clp-check';
import type { AgentMethodContext } from '../../agent-method-context';
import type { ToolContext } from '../../tool-context';
import type { ToolDefinition } from '../../tool-definition';
import { objectNotFound } from '../query/get-object.tool';
import { DOMAIN_ACTION_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { findAgentMethod, methodDenial } from './agent-method-gate';
import { CALL_METHOD_OUTPUT } from '../output-schemas';

interface Args {
  class_name: string;
  method_name: string;
  object_id?: string;
  arguments?: Record<string, unknown>;
}

/** The CLP operation a method's tier must be granted on its class (the spec's mapping). */
const TIER_CLP: Record<string, ClpOperation> = {
  readonly: 'find',
  write: 'update',
  admin: 'delete',
};

const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new WeakMap<AgentMethodDeclaration, ValidateFunction>();

function parameterValidator(method: AgentMethodDeclaration): ValidateFunction | undefined {
  if (!method.parameters) return undefined;
  let validate = validators.get(method);
  if (!validate) {
    try {
      validate = ajv.compile(method.parameters);
    } catch (error) {
      throw new ParseAgentConfigError(
        `@AgentMethod ${method.name}: parameters is not a valid JSON Schema (${(error as Error).message}).`,
      );
    }
    validators.set(method, validate);
  }
  return validate;
}

/**
 * The argument names a method accepts: its permittedKeys when declared (the write boundary),
 * else the properties of its parameters schema, else none. Anything else is refused, so a model
 * cannot mass-assign fields the author never meant to expose.
 */
function checkArguments(qualified: string, method: AgentMethodDeclaration, args: DataRow): void {
  const schemaKeys = isPlainObject(method.parameters?.properties)
    ? Object.keys(method.parameters.properties)
    : undefined;
  const accepted = method.permittedKeys ?? schemaKeys ?? [];
  const extra = Object.keys(args).filter((k) => !accepted.includes(k));
  if (extra.length) {
    throw new AccessDeniedError(
      `arguments: ${extra.map((k) => `'${k}'`).join(', ')} ${extra.length > 1 ? 'are' : 'is'} not accepted by '${qualified}'. ${accepted.length ? `Accepted: ${accepted.join(', ')}.` : 'It takes no arguments.'}`,
      { kind: 'field_denied', deniedField: extra[0] },
    );
  }
  const validate = parameterValidator(method);
  if (validate && !validate(args)) {
    const problems = (validate.errors ?? [])
      .map(
        (e) =>
          `${e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'arguments'} ${e.message ?? 'is invalid'}`,
      )
      .join('; ');
    throw new AgentValidationError(`arguments for '${qualified}': ${problems}`);
  }
}

async function fetchObject(
  context: ToolContext,
  className: string,
  objectId: string,
): Promise<DataRow> {
  const { access, data, signal } = context;
  const plan = await access.planRead(className, {});
  const rows = await data.find(
    className,
    { where: andWhere(plan.where, { objectId }), keys: plan.keys, limit: 1 },
    signal,
  );
  if (!rows[0]) throw objectNotFound(className, objectId);
  return access.redactRows(rows[0], className);
}

export const callMethod: ToolDefinition<Args> = {
  name: 'call_method',
  description:
    'Run a domain action the application declared on a class (see agent_methods in get_schema). Pass arguments.dry_run: true to preview without changing anything.',
  category: 'mutation',
  permission: 'readonly',
  // Includes the time a person may take to confirm an admin method.
  timeout: 120,
  annotations: DOMAIN_ACTION_TOOL,
  outputSchema: CALL_METHOD_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
      method_name: { type: 'string', description: 'The agent method, e.g. "refund".' },
      object_id: {
        type: 'string',
        description: 'The object an instance method acts on (omit for class methods).',
      },
      arguments: {
        type: 'object',
        description: 'The method\'s arguments; add "dry_run": true for a preview.',
      },
    },
    required: ['class_name', 'method_name'],
    additionalProperties: false,
  },
  handler: async (args, context) => {
    const { access, agent, signal } = context;
    const className = args.class_name;
    await access.requireReadableClass(className);
    const method = findAgentMethod(access, className, args.method_name);
    const qualified = `${className}.${args.method_name}`;
    if (!method) {
      throw new AgentValidationError(
        `'${className}' declares no agent method '${args.method_name}'. See agent_methods in get_schema for the ones you may call.`,
      );
    }
    const denial = methodDenial(agent, className, method);
    if (denial) throw denial.error;
    const permission = method.permission ?? 'readonly';

    const schema = await access.schema(className);
    const principals = context.data.principals
      ? await context.data.principals(signal)
      : agent.usingMasterKey
        ? ({ master: true } as const)
        : undefined;
    if (
      !principals ||
      !clpGrants(schema?.classLevelPermissions, TIER_CLP[permission], principals)
    ) {
      throw new AccessDeniedError(
        `'${qualified}' is a ${permission} method and needs the '${TIER_CLP[permission]}' class-level permission on '${className}', which this agent's identity does not have.`,
        { kind: 'clp_denied' },
      );
    }

    if (args.arguments !== undefined && !isPlainObject(args.arguments)) {
      throw new AgentValidationError('arguments must be an object.');
    }
    const { dry_run: dryRunArg, ...methodArgs } = args.arguments ?? {};
    const dryRun = dryRunArg === true || dryRunArg === 'true';
    checkArguments(qualified, method, methodArgs);

    if (method.static && args.object_id !== undefined) {
      throw new AgentValidationError(`'${qualified}' is a class method; omit object_id.`);
    }
    if (!method.static && args.object_id === undefined) {
      throw new AgentValidationError(`'${qualified}' acts on one object; pass its object_id.`);
    }
    if (args.object_id !== undefined && !OBJECT_ID_PATTERN.test(args.object_id)) {
      throw new AgentValidationError(`object_id '${args.object_id}' is not a valid objectId.`);
    }
    const object = args.object_id
      ? await fetchObject(context, className, args.object_id)
      : undefined;

    const base = {
      class_name: className,
      method: args.method_name,
      ...(args.object_id ? { object_id: args.object_id } : {}),
    };
    if (dryRun && !method.supportsDryRun) {
      // Every gate passed, but the method has no preview of its own: say what would be called.
      return {
        ...base,
        dry_run: true,
        supports_real_dry_run: false,
        would_call: {
          class: className,
          method: args.method_name,
          type: method.static ? 'class' : 'instance',
          ...(args.object_id ? { object_id: args.object_id } : {}),
          args: methodArgs,
        },
        note: `'${qualified}' has no preview of its own (supportsDryRun is not declared): every check passed and nothing ran. Call again without dry_run to run it.`,
      };
    }
    if (!dryRun && permission === 'admin') {
      await context.confirm({
        message: `Run ${qualified}${args.object_id ? ` on ${args.object_id}` : ''}? It is an admin action.`,
        tool: 'call_method',
        className,
        objectId: args.object_id,
      });
    }

    const model = access.meta(className)?.model as
      (Record<string, unknown> & { prototype: object }) | undefined;
    const target: Record<string, unknown> | undefined = method.static
      ? model
      : model
        ? (Object.assign(Object.create(model.prototype) as object, object) as Record<
            string,
            unknown
          >)
        : undefined;
    const fn = target?.[method.name];
    if (typeof fn !== 'function') {
      throw new ParseAgentConfigError(`Agent method '${qualified}' has no implementation.`);
    }
    const methodContext: AgentMethodContext = {
      agent,
      className,
      data: permission === 'readonly' ? context.data : context.writeData,
      access,
      object,
      objectId: args.object_id,
      dryRun,
      signal,
      reportProgress: (u) => context.reportProgress(u),
    };
    const result: unknown = await (fn as (a: DataRow, c: AgentMethodContext) => unknown).call(
      target,
      methodArgs,
      methodContext,
    );
    if (!dryRun && permission !== 'readonly') {
      context.audit({
        action: 'call_method',
        class_name: className,
        object_id: args.object_id,
        method: qualified,
        changed_keys: Object.keys(methodArgs).sort(),
      });
    }
    return { ...base, ...(dryRun ? { dry_run: true } : {}), result: result ?? null };
  },
};
