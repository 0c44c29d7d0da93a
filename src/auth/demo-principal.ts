import {
  AgentUnauthorizedError,
  ENV_GATES,
  isTruthyEnv,
  type AgentOptions,
  type PermissionLevel,
} from 'nestjs-parse-agent';

/** Demo users trusted to change data through agent methods (carol holds the admin role). */
const DEMO_WRITERS = new Set(['carol']);

/**
 * The tier a writer gets follows the operator's switches: write methods need
 * PARSE_AGENT_ALLOW_WRITE_TOOLS, admin methods (Customer.anonymize) PARSE_AGENT_ALLOW_SCHEMA_OPS.
 */
function writerTier(env: NodeJS.ProcessEnv = process.env): PermissionLevel {
  if (!isTruthyEnv(env[ENV_GATES.writeTools])) return 'readonly';
  return isTruthyEnv(env[ENV_GATES.schemaOps]) ? 'admin' : 'write';
}

/** Who a request acts for, as established by the demo guard. */
export type DemoPrincipal =
  | { kind: 'user'; sessionToken: string; userId: string; username: string; tenantId?: string }
  | { kind: 'operator' };

export interface DemoRequest {
  demoPrincipal?: DemoPrincipal;
}

/**
 * The demo's agentFactory: a signed-in user gets an agent scoped by their session (Parse enforces
 * their ACLs) and bound to their tenant, readonly except for the demo writers when the operator
 * switched writes on; the operator's API key gets a readonly master-key
 * agent. Anything else is refused.
 */
export function agentOptionsFor(request: DemoRequest): AgentOptions {
  const principal = request.demoPrincipal;
  if (principal?.kind === 'user') {
    return {
      permissions: DEMO_WRITERS.has(principal.username) ? writerTier() : 'readonly',
      sessionToken: principal.sessionToken,
      tenantId: principal.tenantId,
    };
  }
  if (principal?.kind === 'operator') return { permissions: 'readonly' };
  throw new AgentUnauthorizedError('Unauthorized', { reason: 'no principal' });
}
