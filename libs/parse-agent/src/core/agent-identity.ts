import type { PermissionLevel } from './constants';

export type AuthType = 'session_token' | 'master_key' | 'acl_user' | 'acl_role';

/** Who an agent acts for: what the policy, the data router and audit read of an agent. */
export interface AgentIdentity {
  readonly agentId: string;
  readonly permissions: PermissionLevel;
  readonly authType: AuthType;
  readonly usingMasterKey: boolean;
  readonly sessionToken?: string;
  readonly aclUser?: string;
  readonly aclRole?: string;
  readonly tenantId?: string;
}
