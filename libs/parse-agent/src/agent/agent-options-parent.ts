import { DEFAULT_RATE_LIMIT, DEFAULT_RATE_WINDOW_SECONDS } from '../core/constants';
import { SlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import { AccessDeniedError, ParseAgentConfigError } from '../core/errors';
import type { NormalizedListFilter } from '../security/class-filter';

/** The identity options of an agent after validation (at most one is set; none = master key). */
export interface IdentityOptions {
  sessionToken?: string;
  aclUser?: string;
  aclRole?: string;
}

/** An identity for error messages: never the session token itself. */
function describeIdentity(who: IdentityOptions): string {
  if (who.sessionToken) return 'a session token';
  if (who.aclUser) return `aclUser '${who.aclUser}'`;
  if (who.aclRole) return `aclRole '${who.aclRole}'`;
  return 'the master key';
}

/**
 * Refuses a sub-agent whose identity is not its parent's. A sub-agent may only narrow, and
 * aclUser / aclRole are assertions nothing verifies, so the only identity a scoped parent can
 * hand down is its own: the same session token, the same aclUser, the same aclRole. A parent
 * holds one role, and whether another role reads less depends on the role graph, which
 * construction does not read; so a role-scoped parent's child keeps that role. A master-key
 * parent already reaches everything, so any identity is a narrowing.
 */
export function assertSubAgentIdentity(parent: IdentityOptions, child: IdentityOptions): void {
  if (!parent.sessionToken && !parent.aclUser && !parent.aclRole) return;
  if (
    child.sessionToken === parent.sessionToken &&
    child.aclUser === parent.aclUser &&
    child.aclRole === parent.aclRole
  ) {
    return;
  }
  const target =
    child.sessionToken && parent.sessionToken ? 'another session token' : describeIdentity(child);
  throw new AccessDeniedError(
    `A sub-agent acts for its parent's identity (${describeIdentity(parent)}) and cannot switch to ${target}. Omit sessionToken, aclUser and aclRole to inherit the parent's identity; an agent for another user or role must be created from a master-key agent or by the agent factory.`,
  );
}

/**
 * A sub-agent's list filter (classes, tools): what passes both its parent's and its own. A child
 * `only` that shares no name with the parent's is a mistake, refused.
 */
export function intersectListFilters(
  parent: NormalizedListFilter,
  child: NormalizedListFilter | undefined,
  option: string,
): NormalizedListFilter {
  const except = new Set([...parent.except, ...(child?.except ?? [])]);
  let only = parent.only;
  if (child?.only) {
    only = parent.only ? new Set([...child.only].filter((c) => parent.only!.has(c))) : child.only;
    if (!only.size)
      throw new ParseAgentConfigError(
        `The sub-agent ${option} filter shares nothing with its parent's (${[...(parent.only ?? [])].sort().join(', ')}); a sub-agent can only narrow it.`,
      );
  }
  return { only, except };
}

/** Refuses a sub-agent switch that would loosen what its parent enforces. */
export function assertSubAgentSwitches(
  parent: { confirmationRequired: boolean; agentDebug: boolean },
  child: { confirmationRequired?: boolean; agentDebug?: boolean },
): void {
  if (parent.confirmationRequired && child.confirmationRequired === false) {
    throw new ParseAgentConfigError(
      'A sub-agent cannot set confirmationRequired: false when its parent requires confirmation; omit it to inherit.',
    );
  }
  if (!parent.agentDebug && child.agentDebug === true) {
    throw new ParseAgentConfigError(
      'A sub-agent cannot set agentDebug: true when its parent does not disclose debug details; omit it to inherit.',
    );
  }
}

/**
 * The per-agent rate windows of an agent: its ancestors' (a sub-agent is charged to each of them)
 * plus its own when `rateLimit` or `rateWindow` is set. A sub-agent's `rateLimit` may not exceed
 * the tightest limit above it (its ancestors' windows and the shared limiter's declared limit).
 */
export function buildOwnRateWindows(
  own: { rateLimit?: number; rateWindow?: number },
  parent?: { windows: readonly SlidingWindowRateLimiter[]; sharedLimit?: number },
): readonly SlidingWindowRateLimiter[] {
  const inherited = parent?.windows ?? [];
  const { rateLimit, rateWindow } = own;
  if (rateLimit === undefined && rateWindow === undefined) return inherited;
  if (rateLimit !== undefined && (!Number.isInteger(rateLimit) || rateLimit < 1)) {
    throw new ParseAgentConfigError(
      `rateLimit must be a positive integer (calls per rateWindow), got ${JSON.stringify(rateLimit)}.`,
    );
  }
  if (rateWindow !== undefined && !(typeof rateWindow === 'number' && rateWindow > 0)) {
    throw new ParseAgentConfigError(
      `rateWindow must be a positive number of seconds, got ${JSON.stringify(rateWindow)}.`,
    );
  }
  const nearest = inherited[inherited.length - 1];
  const limits = [...inherited.map((w) => w.limit), parent?.sharedLimit].filter(
    (n): n is number => typeof n === 'number',
  );
  const budget = parent && limits.length ? Math.min(...limits) : undefined;
  if (budget !== undefined && rateLimit !== undefined && rateLimit > budget) {
    throw new ParseAgentConfigError(
      `A sub-agent's rateLimit (${rateLimit}) cannot exceed its parent's budget (${budget} calls per window); lower it or omit it to share the parent's.`,
    );
  }
  const window = new SlidingWindowRateLimiter(
    rateLimit ?? budget ?? DEFAULT_RATE_LIMIT,
    rateWindow ?? nearest?.window ?? DEFAULT_RATE_WINDOW_SECONDS,
  );
  return [...inherited, window];
}
