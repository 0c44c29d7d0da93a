import Ajv, { type ValidateFunction } from 'ajv';
import { OBJECT_ID_PATTERN } from '../../../core/constants';
import {
  AccessDeniedError,
  AgentCancelledError,
  AgentValidationError,
  ParseAgentConfigError,
  ParseAgentError,
  quotingUntrusted,
  ToolTimeoutError,
} from '../../../core/errors';
import type { AgentMethodDeclaration } from '../../../metadata/metadata.types';
import type { DataRow } from '../../../ports/data-path';
import { isPlainObject } from '../../../core/plain-object';
import { andWhere } from '../../../query/where-composer';
import { clpGrants, type ClpOperation } from '../../../security/clp-check';
import { isPointerRefusal } from '../../../security/pointer-write-check';
import type { AgentMethodContext } from '../../agent-method-context';
import type { ToolContext } from '../../tool-context';
import type { ToolDefinition } from '../../tool-definition';
import { objectNotFound } from '../query/get-object.tool';
import { DOMAIN_ACTION_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { acceptedArgumentNames, findAgentMethod, methodDenial } from './agent-method-gate';
import { writeToReadableObject } from './write-refused';
import { CALL_METHOD_OUTPUT } from '../output-schemas';
import { methodDataPath, writtenKeys } from './method-data-path';
import { sdkMethodTarget, type SdkMethodTarget } from './sdk-method-target';
import { isParseObjectModel } from '../../../metadata/parse-object-model';
import { DRY_RUN_ARG } from './mutation-schemas';
import { dryRunFlag } from '../dry-run-flag';
import { validateDto } from '../../../validation/dto';

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
async function checkArguments(
  qualified: string,
  method: AgentMethodDeclaration,
  args: DataRow,
): Promise<DataRow> {
  const accepted = acceptedArgumentNames(method);
  const extra = Object.keys(args).filter((k) => !accepted.includes(k));
  if (extra.length) {
    throw new AccessDeniedError(
      `arguments: ${extra.map((k) => `'${k}'`).join(', ')} ${extra.length > 1 ? 'are' : 'is'} not accepted by '${qualified}'. ${accepted.length ? `Accepted: ${accepted.join(', ')}.` : 'It takes no arguments.'}`,
      { kind: 'field_denied', deniedField: extra[0] },
    );
  }
  // A DTO is checked by class-validator (the method receives the DTO instance); a JSON Schema by ajv.
  if (method.parametersDto) {
    return (await validateDto(
      method.parametersDto,
      args,
      `arguments for '${qualified}'`,
    )) as DataRow;
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
  return args;
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

const DRY_RUN_WRITE_NOTE =
  'A dry run does not check write permission: the real call can still be refused if the user may not write the object.';

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
        properties: { dry_run: DRY_RUN_ARG },
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
    const { dry_run: dryRunArg, ...sentArgs } = args.arguments ?? {};
    const dryRun = dryRunFlag(dryRunArg, 'arguments.dry_run');
    const methodArgs = await checkArguments(qualified, method, sentArgs);

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
    // A preview reads; Parse checks write permission (row ACL, CLP) only when the write runs.
    const writeNote =
      dryRun && permission !== 'readonly' ? { dry_run_note: DRY_RUN_WRITE_NOTE } : {};
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
        ...writeNote,
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

    // Writes go through a path that records them (the audit names what was written) and refuses
    // them outright in a preview or from a readonly method.
    const methodData = methodDataPath(
      permission === 'readonly' ? context.data : context.writeData,
      dryRun
        ? `'${qualified}' was called with dry_run: true and may not write`
        : permission === 'readonly'
          ? `'${qualified}' is a readonly method and may not write`
          : undefined,
    );
    const model = access.meta(className)?.model;
    let target = model as Record<string, unknown> | undefined;
    let sdkTarget: SdkMethodTarget | undefined;
    if (model && object && !method.static) {
      if (isParseObjectModel(model)) {
        // A real SDK instance built from the row; its save() and destroy() write through
        // methodData, with the agent's identity.
        sdkTarget = sdkMethodTarget(model, {
          className,
          qualified,
          row: object,
          data: methodData.path,
          signal,
        });
        target = sdkTarget.object as Record<string, unknown>;
      } else {
        target = Object.assign(Object.create(model.prototype as object) as object, object);
      }
    }
    const fn = target?.[method.name];
    if (typeof fn !== 'function') {
      throw new ParseAgentConfigError(`Agent method '${qualified}' has no implementation.`);
    }
    const methodContext: AgentMethodContext = {
      agent,
      className,
      data: methodData.path,
      access,
      object,
      objectId: args.object_id,
      dryRun,
      signal,
      reportProgress: (u) => context.reportProgress(u),
    };
    const audit = (failed: boolean) =>
      context.audit({
        action: 'call_method',
        class_name: className,
        object_id: args.object_id,
        method: qualified,
        changed_keys: writtenKeys(methodData.writes),
        ...(methodData.writes.length ? { writes: methodData.writes } : {}),
        ...(failed ? { failed: true as const } : {}),
      });
    const run = async () =>
      (fn as (a: DataRow, c: AgentMethodContext) => unknown).call(
        target,
        methodArgs,
        methodContext,
      );
    let result: unknown;
    try {
      // A write method on an object this agent just read: "not found" from Parse then most likely
      // means the user may not write it (the dry run could not tell).
      result =
        !dryRun && permission !== 'readonly' && object && args.object_id
          ? await writeToReadableObject(className, args.object_id, run)
          : await run();
    } catch (caught) {
      // A write that happened is audited even when the method failed afterwards.
      if (methodData.writes.length) audit(true);
      // A timeout or cancellation that reached the method through its signal is the library's own
      // and stays plain, as does the write path's refusal of a pointer the agent cannot read.
      const own =
        caught instanceof AgentCancelledError ||
        caught instanceof ToolTimeoutError ||
        isPointerRefusal(caught);
      // An SDK call refused for using the application's credentials is the reason the method
      // failed, even when the SDK wrapped it in an error of its own (saveAll does).
      const error = (!own && sdkTarget?.refusal()) || caught;
      // The method's message is the application's text and may quote stored values.
      throw error instanceof ParseAgentError && !own
        ? quotingUntrusted(error, `'${qualified}' stopped with this message from the method:`)
        : error;
    }
    if (!dryRun && permission !== 'readonly') audit(false);
    return { ...base, ...(dryRun ? { dry_run: true, ...writeNote } : {}), result: result ?? null };
  },
};
