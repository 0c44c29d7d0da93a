import type { AgentOptions } from '../agent/parse-agent';
import type { PermissionLevel } from '../core/constants';
import { AgentUnauthorizedError } from '../core/errors';
import { identityValue } from '../core/identity-value';
import { printAs, shownSecret } from '../core/secret-display';
import {
  principalOf,
  type ParseAgentOperatorPrincipal,
  type ParseAgentPrincipal,
  type ParseAgentUserPrincipal,
} from './parse-agent-principal';

/** Agent options a binding may add; the identity and the tenant stay the principal's. */
export type ExtraAgentOptions = Omit<
  AgentOptions,
  'sessionToken' | 'aclUser' | 'aclRole' | 'tenantId' | 'permissions' | 'parent' | 'signal'
>;

export interface BindAgentToPrincipalOptions {
  /** A signed-in user's tier: a level or one chosen per user (default 'readonly'). */
  userPermissions?: PermissionLevel | ((user: ParseAgentUserPrincipal) => PermissionLevel);
  /** The operator's master-key agent's tier (default 'readonly'). */
  operatorPermissions?: PermissionLevel;
  /**
   * Refuse users without a tenant (default true). Set false only in an app without tenants: the
   * user's agent then has a session and no tenant (tenant-scoped classes refuse it).
   */
  requireTenant?: boolean;
  /** Further options per principal (tools, classes, filters, ...). */
  extend?: (principal: ParseAgentPrincipal) => ExtraAgentOptions | undefined;
}

/**
 * The agent options of a principal: a user gets their session token (Parse enforces their ACLs)
 * and the tenant the guard found from a trusted source; a user without one is refused
 * (AgentUnauthorizedError, reason `no_tenant`), and so is a user whose session token or tenant is
 * present but empty, blank or not a string (reason `blank_identity`). The operator gets a master-key agent, readonly
 * unless `operatorPermissions` says otherwise. No principal is refused.
 */
export function agentOptionsForPrincipal(
  principal: ParseAgentPrincipal | undefined,
  options: BindAgentToPrincipalOptions = {},
): AgentOptions {
  if (principal?.kind === 'user') return userAgent(principal, options);
  if (principal?.kind === 'operator') return operatorAgent(principal, options);
  throw new AgentUnauthorizedError(
    'No authenticated caller on the request: put ParseSessionGuard, McpApiKeyGuard or ParseAgentAuthGuard in front of this route.',
    { reason: 'no_principal' },
  );
}

/**
 * An `agentFactory` for the shipped guards: `agentFactory: bindAgentToPrincipal()` maps the
 * principal they put on the request to agent options (see agentOptionsForPrincipal).
 */
export function bindAgentToPrincipal(
  options: BindAgentToPrincipalOptions = {},
): (request: unknown) => AgentOptions {
  return (request) => agentOptionsForPrincipal(principalOf(request), options);
}

function userAgent(
  user: ParseAgentUserPrincipal,
  options: BindAgentToPrincipalOptions,
): AgentOptions {
  // A user acts with their own session, always: a principal without a usable token (empty,
  // blank, missing) is refused, never turned into options without one (the master key).
  const sessionToken = identityValue('sessionToken', user.sessionToken ?? null)!;
  const tenantId = identityValue('tenantId', user.tenantId);
  const requireTenant = options.requireTenant ?? true;
  if (requireTenant && !tenantId) {
    throw new AgentUnauthorizedError(
      `No tenant for user ${user.username || user.userId}: ${user.noTenantReason ?? 'no tenant source.'}`,
      { reason: 'no_tenant' },
    );
  }
  const tier = options.userPermissions ?? 'readonly';
  const bound: AgentOptions = {
    ...extraOptions(options, user),
    permissions: typeof tier === 'function' ? tier(user) : tier,
    sessionToken,
    ...(tenantId ? { tenantId } : {}),
  };
  // Printed or serialized, the options show the token's fingerprint; a spread copy is the caller's.
  return printAs(bound, 'AgentOptions', () => ({
    ...bound,
    sessionToken: shownSecret(bound.sessionToken),
  }));
}

function operatorAgent(
  operator: ParseAgentOperatorPrincipal,
  options: BindAgentToPrincipalOptions,
): AgentOptions {
  return {
    ...extraOptions(options, operator),
    permissions: options.operatorPermissions ?? 'readonly',
  };
}

/** What `extend` adds, with any identity or tenant key dropped (they stay the principal's). */
function extraOptions(
  options: BindAgentToPrincipalOptions,
  principal: ParseAgentPrincipal,
): ExtraAgentOptions {
  const extra = { ...(options.extend?.(principal) ?? {}) } as Record<string, unknown>;
  for (const key of IDENTITY_KEYS) delete extra[key];
  return extra as ExtraAgentOptions;
}

const IDENTITY_KEYS = [
  'sessionToken',
  'aclUser',
  'aclRole',
  'tenantId',
  'permissions',
  'parent',
  'signal',
] as const;
