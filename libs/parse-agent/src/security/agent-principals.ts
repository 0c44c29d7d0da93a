import { ParseAgentConfigError } from '../core/errors';
import type { DataPath, DataPrincipals } from '../ports/data-path';

/** Who an agent is for row ACLs, as the policed reader of a custom tool's context answers it. */
interface PrincipalSource {
  principals(signal?: AbortSignal): Promise<DataPrincipals>;
  refreshPrincipals(signal?: AbortSignal): Promise<void>;
}

/**
 * What the principal helpers read of a tool context: a custom tool's policed context (`read`), a
 * master tool's `ToolContext` or an `AgentMethodContext` (`data`).
 */
export interface PrincipalContext {
  /** The agent's policed reader (a custom tool's context). */
  read?: PrincipalSource;
  /** The agent's read path, bound to its identity. */
  data?: DataPath;
  signal?: AbortSignal;
}

/**
 * Who the calling agent is for row ACLs and class-level permissions: `{ master: false,
 * principals: ['*', userId?, 'role:A', 'role:B', ...] }` (a session's or aclUser's user with its
 * roles, inherited ones included; an aclRole with the roles it inherits), or `{ master: true }`
 * for a master-key agent. Feed it to `aclReadMatchStage` / `aclReadSqlClause`. Throws when the
 * data path cannot tell (fail closed: no principals never means "no filter").
 */
export async function agentPrincipals(context: PrincipalContext): Promise<DataPrincipals> {
  if (context.read) return context.read.principals(context.signal);
  const path = context.data;
  if (typeof path?.principals !== 'function') {
    throw new ParseAgentConfigError(
      `The '${path?.kind ?? 'unknown'}' data path cannot say who the agent is (it has no principals()); ACL helpers need one of the library's paths or a path that implements principals().`,
    );
  }
  return path.principals(context.signal);
}

/**
 * Forgets the principals cached for the calling agent's identity (role expansions are kept for
 * a short time) and resolves them again: call it after changing the agent's user's or role's
 * membership at run time, so the next queries use the new roles.
 */
export async function refreshAgentPrincipals(context: PrincipalContext): Promise<DataPrincipals> {
  if (context.read) await context.read.refreshPrincipals(context.signal);
  else await context.data?.refreshPrincipals?.(context.signal);
  return agentPrincipals(context);
}
