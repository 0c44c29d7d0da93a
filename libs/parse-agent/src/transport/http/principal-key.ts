import { hash } from 'node:crypto';
import type { AgentIdentity } from '../../core/agent-identity';

/**
 * The principal an agent acts for, as an opaque digest (never the session token itself): sessions
 * and cancellations are scoped to it, so one user cannot resume or cancel another user's work.
 */
export function principalKey(agent: AgentIdentity): string {
  const identity = agent.sessionToken ?? agent.aclUser ?? agent.aclRole ?? '';
  // One-shot hash: about half the cost of a Hash object, and this runs on every request.
  return hash(
    'sha256',
    `${agent.authType}\u0000${identity}\u0000${agent.tenantId ?? ''}`,
    'base64url',
  );
}
