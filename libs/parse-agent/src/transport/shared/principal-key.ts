import { hash } from 'node:crypto';
import type { AgentIdentity } from '../../core/agent-identity';

/**
 * The principal a request acts for, as an opaque digest (never the session token itself):
 * sessions, streams and cancellations are scoped to it, so one caller cannot resume, use, end or
 * cancel another's. It is the agent's identity (auth type, token, ACL user or role, tenant) and,
 * when the host names whom the request is for (`mcp.userKey`), that key too: master-key agents
 * of two operators have the same identity, and only the host's key tells them apart.
 */
export function principalKey(agent: AgentIdentity, hostKey?: string): string {
  const identity = agent.sessionToken ?? agent.aclUser ?? agent.aclRole ?? '';
  const host = hostKey === undefined ? '' : `\u0000host\u0000${hostKey}`;
  // One-shot hash: about half the cost of a Hash object, and this runs on every request.
  return hash(
    'sha256',
    `${agent.authType}\u0000${identity}\u0000${agent.tenantId ?? ''}${host}`,
    'base64url',
  );
}
