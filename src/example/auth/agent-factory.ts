import {
  agentOptionsForPrincipal,
  principalOf,
  type AgentOptions,
  type PermissionLevel,
  type TenantSource,
} from 'nestjs-parse-agent';
import { ENV_GATES, isTruthyEnv } from 'nestjs-parse-agent/ops';

/** Demo users trusted to change data through agent methods (carol holds the admin role). */
const DEMO_WRITERS = new Set(['carol']);

/** The demo's tenants: direct members of `<slug>-staff` act for tenant `<slug>`. */
export const DEMO_TENANT_SOURCE: TenantSource = { fromRole: '{tenant}-staff' };

/**
 * The tier a writer gets follows the operator's switches: write methods need
 * PARSE_AGENT_ALLOW_WRITE_TOOLS, admin methods (Customer.anonymize) PARSE_AGENT_ALLOW_SCHEMA_OPS.
 */
function writerTier(env: NodeJS.ProcessEnv = process.env): PermissionLevel {
  if (!isTruthyEnv(env[ENV_GATES.writeTools])) return 'readonly';
  return isTruthyEnv(env[ENV_GATES.schemaOps]) ? 'admin' : 'write';
}

/**
 * The demo's agentFactory over the library's binding (ParseAgentAuthGuard put the caller on the
 * request): a signed-in user gets their session and the tenant of their tenant role, readonly
 * except for the demo writers when the operator switched writes on; the operator key gets a
 * readonly master-key agent. A user without exactly one tenant role is refused.
 */
export function agentOptionsFor(request: unknown): AgentOptions {
  return agentOptionsForPrincipal(principalOf(request), {
    userPermissions: (user) => (DEMO_WRITERS.has(user.username) ? writerTier() : 'readonly'),
  });
}
