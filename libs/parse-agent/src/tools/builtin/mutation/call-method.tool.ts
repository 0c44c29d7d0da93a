import { OBJECT_ID_PATTERN } from '../../../core/constants';
import {
  AgentCancelledError,
  AgentValidationError,
  ParseAgentError,
  quotingUntrusted,
  ToolTimeoutError,
} from '../../../core/errors';
import { isPointerRefusal } from '../../../security/pointer-write-check';
import type { AgentMethodContext } from '../../agent-method-context';
import type { PolicedReader } from '../../read/policed-reader';
import { writeTool } from '../../write/write-tool';
import { objectNotFound } from '../query/get-object.tool';
import { CALL_METHOD_OUTPUT } from '../output-schemas';
import { DOMAIN_ACTION_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { assertMethodClp, findAgentMethod, methodDenial } from './agent-method-gate';
import { methodArguments } from './method-arguments';
import { methodTarget } from './method-target';
import { DRY_RUN_ARG } from './mutation-schemas';

/**
 * The object an instance method acts on, read as the agent reads (tenant, filters, canonical
 * filter, allowlist, redaction): another tenant's row is "not found".
 */
async function readObject(read: PolicedReader, className: string, objectId: string) {
  const { rows } = await read.find(className, { where: { objectId }, limit: 1 });
  if (!rows[0]) throw objectNotFound(className, objectId);
  return rows[0];
}

const DRY_RUN_WRITE_NOTE =
  'A dry run does not check write permission: the real call can still be refused if the user may not write the object.';

export const callMethod = writeTool({
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
  // Admin methods ask the person first (not in a preview): the writer asks, after every check.
  confirm: { asks: (target) => target.step === 'method' && target.tier === 'admin' },
  handler: async (args, { access, agent, read, write, signal, reportProgress }) => {
    const className = args.class_name;
    await read.gate(className);
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
    const principals = agent.usingMasterKey ? ({ master: true } as const) : await read.principals();
    await assertMethodClp(access, principals, className, qualified, permission);
    const { dryRun, args: methodArgs } = await methodArguments(qualified, method, args.arguments);

    const objectId = args.object_id;
    if (method.static && objectId !== undefined) {
      throw new AgentValidationError(`'${qualified}' is a class method; omit object_id.`);
    }
    if (!method.static && objectId === undefined) {
      throw new AgentValidationError(`'${qualified}' acts on one object; pass its object_id.`);
    }
    if (objectId !== undefined && !OBJECT_ID_PATTERN.test(objectId)) {
      throw new AgentValidationError(`object_id '${objectId}' is not a valid objectId.`);
    }
    const object = objectId === undefined ? undefined : await readObject(read, className, objectId);

    const base = {
      class_name: className,
      method: args.method_name,
      ...(objectId ? { object_id: objectId } : {}),
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
          ...(objectId ? { object_id: objectId } : {}),
          args: methodArgs,
        },
        note: `'${qualified}' has no preview of its own (supportsDryRun is not declared): every check passed and nothing ran. Call again without dry_run to run it.`,
        ...writeNote,
      };
    }

    let refusal: () => Error | undefined = () => undefined;
    try {
      // One write step: the confirmation (admin, not a preview), then the method with a ctx.data
      // and ctx.write that check, record and (preview, readonly method) refuse its writes.
      const call = { className, objectId, qualified, permission, dryRun };
      const result = await write.method(call, async (session) => {
        const target = methodTarget({
          model: access.meta(className)?.model,
          method,
          className,
          qualified,
          object,
          data: session.data,
          signal,
        });
        refusal = target.refusal;
        const methodContext: AgentMethodContext = {
          agent,
          className,
          data: session.data,
          read,
          write: session.write,
          access,
          object,
          objectId,
          dryRun,
          signal,
          reportProgress,
        };
        return target.fn.call(target.self, methodArgs, methodContext);
      });
      return {
        ...base,
        ...(dryRun ? { dry_run: true, ...writeNote } : {}),
        result: result ?? null,
      };
    } catch (caught) {
      // A timeout or cancellation that reached the method through its signal is the library's own
      // and stays plain, as does the write path's refusal of a pointer the agent cannot read.
      const own =
        caught instanceof AgentCancelledError ||
        caught instanceof ToolTimeoutError ||
        isPointerRefusal(caught);
      // An SDK call refused for using the application's credentials is the reason the method
      // failed, even when the SDK wrapped it in an error of its own (saveAll does).
      const error = (!own && refusal()) || caught;
      // The method's message is the application's text and may quote stored values.
      throw error instanceof ParseAgentError && !own
        ? quotingUntrusted(error, `'${qualified}' stopped with this message from the method:`)
        : error;
    }
  },
});
