import { principalOf } from './parse-agent-principal';

/**
 * The MCP per-user key of a request the shipped guards authenticated: the Parse user id they
 * already know, so counting sessions needs no second `/users/me`. Only when the agent acts with
 * the principal's own token (an agentFactory may build something else); undefined otherwise.
 */
export function principalUserKey(
  request: unknown,
  agent: { sessionToken?: string },
): string | undefined {
  const principal = principalOf(request);
  if (principal?.kind !== 'user' || !agent.sessionToken) return undefined;
  return agent.sessionToken === principal.sessionToken
    ? `parse-user:${principal.userId}`
    : undefined;
}
