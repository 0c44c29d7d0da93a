import type { TenantScopeSubject } from 'nestjs-parse-agent';

/**
 * The demo's tenant rule: agents acting for a user are bound to that user's tenant; the operator's
 * master-key agent (no tenant binding) may read across tenants.
 */
export const operatorBypass = (agent: TenantScopeSubject): boolean =>
  agent.usingMasterKey && !agent.tenantId;
