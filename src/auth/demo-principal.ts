import { AgentUnauthorizedError, type AgentOptions } from 'nestjs-parse-agent';

/** Who a request acts for, as established by the demo guard. */
export type DemoPrincipal =
  | { kind: 'user'; sessionToken: string; userId: string; username: string; tenantId?: string }
  | { kind: 'operator' };

export interface DemoRequest {
  demoPrincipal?: DemoPrincipal;
}

/**
 * The demo's agentFactory: a signed-in user gets a readonly agent scoped by their session (Parse
 * enforces their ACLs) and bound to their tenant; the operator's API key gets a readonly master-key
 * agent. Anything else is refused.
 */
export function agentOptionsFor(request: DemoRequest): AgentOptions {
  const principal = request.demoPrincipal;
  if (principal?.kind === 'user') {
    return {
      permissions: 'readonly',
      sessionToken: principal.sessionToken,
      tenantId: principal.tenantId,
    };
  }
  if (principal?.kind === 'operator') return { permissions: 'readonly' };
  throw new AgentUnauthorizedError('Unauthorized', { reason: 'no principal' });
}
