import type { ApprovalEvent } from '../core/agent-events';
import { AccessDeniedError, AgentCancelledError, ParseAgentConfigError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import type { ReadPolicy } from '../security/read-policy';
import { findAgentMethod } from '../tools/builtin/mutation/agent-method-gate';
import type { ToolDefinition } from '../tools/tool-definition';

/** The `confirm` agent option: which tiers need a person's approval, and how long to wait. */
export interface ApprovalOptions {
  /** Every write-tier call (create_object, update_object, write methods) waits for approval. */
  write?: boolean;
  /** Every admin-tier call (deletes, schema changes, admin methods) waits for approval. */
  admin?: boolean;
  /** How long a person has to answer (default DEFAULT_APPROVAL_TIMEOUT_MS); then the call is refused. */
  timeoutMs?: number;
}

/** Two minutes: long enough to read the question, short enough not to hold a stream for ever. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 120_000;
const APPROVAL_TIERS = ['write', 'admin'] as const;
type ApprovalTier = (typeof APPROVAL_TIERS)[number];

/** Approvals as an agent keeps them. */
export interface ApprovalSettings {
  tiers: ReadonlySet<ApprovalTier>;
  timeoutMs: number;
}

/**
 * Validates `confirm` and merges it with the parent's: a sub-agent may add tiers and shorten the
 * wait, never drop a tier its parent has. Unknown keys and wrong values name the option.
 */
export function resolveApprovalOption(
  value: unknown,
  parent: ApprovalSettings | undefined,
  option = 'confirm',
): ApprovalSettings {
  const tiers = new Set<ApprovalTier>(parent?.tiers ?? []);
  let timeoutMs = parent?.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  if (value === undefined || value === null) return { tiers, timeoutMs };
  if (!isPlainObject(value))
    throw new ParseAgentConfigError(`${option} must be { write?, admin?, timeoutMs? }.`);
  for (const [key, given] of Object.entries(value)) {
    if ((APPROVAL_TIERS as readonly string[]).includes(key)) {
      if (typeof given !== 'boolean')
        throw new ParseAgentConfigError(`${option}.${key} must be true or false.`);
      const tier = key as ApprovalTier;
      if (given) tiers.add(tier);
      else if (parent?.tiers.has(tier))
        throw new ParseAgentConfigError(
          `${option}.${key}: a sub-agent cannot drop an approval its parent requires; omit it to inherit.`,
        );
    } else if (key === 'timeoutMs') {
      if (typeof given !== 'number' || !Number.isInteger(given) || given <= 0)
        throw new ParseAgentConfigError(
          `${option}.timeoutMs must be a positive whole number of milliseconds.`,
        );
      timeoutMs = parent ? Math.min(parent.timeoutMs, given) : given;
    } else {
      throw new ParseAgentConfigError(
        `${option}: unknown key '${key}'; it takes write, admin and timeoutMs.`,
      );
    }
  }
  return { tiers, timeoutMs };
}

/** What a call needs approval for: its tier, and where it acts (for the question). */
export interface ApprovalNeed {
  tier: ApprovalTier;
  className?: string;
  objectId?: string;
  method?: string;
}

/**
 * The call's effective tier, when approvals cover it: the tool's own tier, except call_method,
 * which takes the tier the application declared on the method (a write method is a write, even
 * though call_method itself is readonly). A dry run changes nothing and is never held.
 */
export function approvalNeed(
  settings: ApprovalSettings,
  tool: Pick<ToolDefinition, 'name' | 'permission'>,
  args: Record<string, unknown>,
  access: ReadPolicy,
): ApprovalNeed | undefined {
  if (!settings.tiers.size) return undefined;
  const className = typeof args.class_name === 'string' ? args.class_name : undefined;
  const objectId = typeof args.object_id === 'string' ? args.object_id : undefined;
  let tier = tool.permission ?? 'readonly';
  let method: string | undefined;
  if (tool.name === 'call_method') {
    method = typeof args.method_name === 'string' ? args.method_name : undefined;
    const declared = className && method ? findAgentMethod(access, className, method) : undefined;
    tier = declared?.permission ?? 'readonly';
    const inner = args.arguments;
    if (isPlainObject(inner) && inner.dry_run === true) return undefined;
  }
  if (tier === 'readonly' || !settings.tiers.has(tier)) return undefined;
  return { tier, className, objectId, method };
}

/**
 * Asks the person to approve the call and waits at most `timeoutMs`. Fails closed: no way to ask,
 * a decline, a dismissal, the time running out or the call being cancelled all refuse it. Returns
 * the outcome for the approval event; throws AccessDeniedError (or the cancellation) when not
 * approved.
 */
export async function awaitApproval(
  toolName: string,
  need: ApprovalNeed,
  channel: ElicitationChannel | undefined,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): Promise<void> {
  const target = [
    toolName,
    need.method ? `'${need.method}'` : '',
    need.className ? `on ${need.className}` : '',
    need.objectId ?? '',
  ]
    .filter(Boolean)
    .join(' ');
  if (!channel) {
    throw new ApprovalRefusedError(
      'unavailable',
      `${target} is a ${need.tier}-tier call that needs a person's approval, and this client cannot ask for it (no MCP elicitation capability, or not a streaming call). It was not run.`,
    );
  }
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(), timeoutMs);
  const onAbort = () => timer.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const answer = await channel.elicit(
      {
        message: `Approve ${target} (${need.tier} tier)?`,
        requestedSchema: {
          type: 'object',
          properties: {
            approve: { type: 'boolean', title: 'Approve', description: `Allow ${target}` },
          },
          required: ['approve'],
        },
      },
      timer.signal,
    );
    if (answer.action === 'accept' && answer.content?.approve !== false) return;
    const declined = answer.action === 'accept' ? 'declined' : answer.action;
    throw new ApprovalRefusedError(
      'declined',
      `The person did not approve ${target} (${declined}); it was not run.`,
    );
  } catch (error) {
    if (error instanceof ApprovalRefusedError) throw error;
    if (signal?.aborted)
      throw new ApprovalRefusedError(
        'cancelled',
        `${target}: cancelled while waiting for approval; it was not run.`,
      );
    if (timer.signal.aborted)
      throw new ApprovalRefusedError(
        'timeout',
        `Nobody approved ${target} within ${Math.round(timeoutMs / 1000)} s; it was not run.`,
      );
    if (error instanceof AgentCancelledError)
      throw new ApprovalRefusedError(
        'cancelled',
        `${target}: the approval was abandoned (${error.message}); it was not run.`,
      );
    throw error;
  } finally {
    clearTimeout(timeout);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** A call refused because its approval was not given (kind `approval_<outcome>`). */
export class ApprovalRefusedError extends AccessDeniedError {
  constructor(
    readonly outcome: Exclude<ApprovalEvent['outcome'], 'approved'>,
    message: string,
  ) {
    super(message, { kind: `approval_${outcome}` });
  }
}
