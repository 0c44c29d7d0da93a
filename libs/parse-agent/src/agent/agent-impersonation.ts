import type { AgentIdentity } from '../core/agent-identity';
import { OBJECT_ID_PATTERN } from '../core/constants';
import { AccessDeniedError, ParseAgentConfigError } from '../core/errors';
import { randomHex } from '../core/random-hex';
import type { DataRouter } from '../data/data-router';

/** Whom to impersonate: a `_User` objectId, or a pointer / object naming one. */
export type ImpersonationTarget =
  string | { objectId: string; className?: string; __type?: 'Pointer' | 'Object' };

/** The `impersonate` agent option and the options of `agent.impersonate()`. */
export interface ImpersonateOptions {
  /** The `_User` to act as. Anything else (another class's pointer) is refused. */
  user: ImpersonationTarget;
  /**
   * With no active session of the user, create a restricted one that expires after
   * IMPERSONATION_SESSION_TTL_MS (revoked again by `stopImpersonating()`). Default false: no
   * session means a refusal.
   */
  mint?: boolean;
  /** Who is impersonating and why ("support: ticket 4411"), on events, audit lines, describe(). */
  label?: string;
}

/** What describe(), events and audit lines show of an impersonation (never the token). */
export interface ImpersonationInfo {
  user: string;
  label?: string;
  /** The session was created for this impersonation (and is revoked when it stops). */
  minted: boolean;
}

/** An impersonation as the agent binds it. */
export interface ResolvedImpersonation extends ImpersonationInfo {
  sessionToken: string;
  /** objectId of the `_Session` created when `minted`. */
  sessionId?: string;
}

/** How long a minted session lives (15 minutes): impersonation is for a support look, not a login. */
export const IMPERSONATION_SESSION_TTL_MS = 15 * 60_000;
/** A found session must stay valid at least this long to be used. */
const MIN_REMAINING_MS = 60_000;
const MAX_LABEL_LENGTH = 128;

/** The master-key identity impersonation reads and writes `_Session` with. */
function masterIdentity(agentId: string): AgentIdentity {
  return { agentId, permissions: 'admin', authType: 'master_key', usingMasterKey: true };
}

/** Validates the target: a `_User` objectId, never another class's (ids are not unique across classes). */
export function impersonationUserId(target: unknown, option = 'impersonate.user'): string {
  let objectId: unknown = target;
  if (typeof target === 'object' && target !== null && !Array.isArray(target)) {
    const t = target as { objectId?: unknown; className?: unknown };
    if (t.className !== undefined && t.className !== '_User') {
      throw new AccessDeniedError(
        `${option}: only a _User can be impersonated (got a ${JSON.stringify(t.className)} pointer); objectIds are not unique across classes, so another class's id is refused.`,
      );
    }
    objectId = t.objectId;
  }
  if (typeof objectId !== 'string' || !OBJECT_ID_PATTERN.test(objectId)) {
    throw new ParseAgentConfigError(
      `${option} must be a _User objectId or { className: '_User', objectId } (got ${JSON.stringify(target)}).`,
    );
  }
  return objectId;
}

/** A label as shown: trimmed, at most 128 characters, printable; blank is no label. */
export function impersonationLabel(
  label: unknown,
  option = 'impersonate.label',
): string | undefined {
  if (label === undefined || label === null) return undefined;
  if (typeof label !== 'string') throw new ParseAgentConfigError(`${option} must be a string.`);
  const printable = [...label].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join('');
  const shown = printable.trim().slice(0, MAX_LABEL_LENGTH);
  return shown || undefined;
}

/** Checks the shape of the `impersonate` option (no I/O); throws naming the option. */
export function checkImpersonateOption(value: unknown, option = 'impersonate'): ImpersonateOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ParseAgentConfigError(`${option} must be { user, mint?, label? }.`);
  }
  const extra = Object.keys(value).filter((k) => !['user', 'mint', 'label'].includes(k));
  if (extra.length)
    throw new ParseAgentConfigError(
      `${option}: unknown key(s) ${extra.join(', ')}; it takes user, mint and label.`,
    );
  const given = value as ImpersonateOptions;
  impersonationUserId(given.user, `${option}.user`);
  if (given.mint !== undefined && typeof given.mint !== 'boolean')
    throw new ParseAgentConfigError(`${option}.mint must be true or false.`);
  impersonationLabel(given.label, `${option}.label`);
  return given;
}

/**
 * Finds a session of the user that Parse Server will accept (or mints one when allowed), with
 * the master key. Throws, binding nothing, when the user does not exist or has no session and
 * minting is off: the caller's identity stays as it was.
 */
export async function resolveImpersonation(
  data: DataRouter,
  agentId: string,
  request: ImpersonateOptions,
  signal?: AbortSignal,
): Promise<ResolvedImpersonation> {
  const user = impersonationUserId(request.user);
  const label = impersonationLabel(request.label);
  const master = masterIdentity(agentId);
  const reader = data.pathFor('get', master);
  const exists = await reader.get('_User', user, { keys: ['objectId'] }, signal);
  if (!exists) {
    throw new AccessDeniedError(`impersonate: no _User ${user}; nothing was changed.`);
  }
  const pointer = { __type: 'Pointer', className: '_User', objectId: user };
  const validUntil = new Date(Date.now() + MIN_REMAINING_MS).toISOString();
  const [session] = await data.pathFor('find', master).find(
    '_Session',
    {
      where: { user: pointer, expiresAt: { $gt: { __type: 'Date', iso: validUntil } } },
      keys: ['sessionToken'],
      order: '-updatedAt',
      limit: 1,
    },
    signal,
  );
  const token = session?.sessionToken;
  if (typeof token === 'string' && token) {
    return { user, label, minted: false, sessionToken: token };
  }
  if (!request.mint) {
    throw new AccessDeniedError(
      `impersonate: _User ${user} has no active session, so there is nothing to act with; pass mint: true to create a restricted short-lived one. The agent's identity is unchanged.`,
    );
  }
  const writer = data.pathFor('write', master);
  if (!writer.create) {
    throw new ParseAgentConfigError(
      `impersonate: the '${writer.kind}' data path cannot create a session to mint one.`,
    );
  }
  const sessionToken = `r:${randomHex(16)}`;
  const expiresAt = new Date(Date.now() + IMPERSONATION_SESSION_TTL_MS).toISOString();
  const created = await writer.create(
    '_Session',
    {
      user: pointer,
      sessionToken,
      restricted: true,
      createdWith: { action: 'create', authProvider: 'impersonation' },
      expiresAt: { __type: 'Date', iso: expiresAt },
    },
    signal,
  );
  return { user, label, minted: true, sessionToken, sessionId: created.objectId };
}

/** Deletes a minted session with the master key (a found session belongs to the user: kept). */
export async function revokeImpersonation(
  data: DataRouter,
  agentId: string,
  impersonation: ResolvedImpersonation,
): Promise<void> {
  if (!impersonation.minted || !impersonation.sessionId) return;
  const path = data.pathFor('write', masterIdentity(agentId));
  await path.delete?.('_Session', impersonation.sessionId);
}
