import type { PermissionLevel } from './constants';

export type AuthType = 'session_token' | 'master_key' | 'acl_user' | 'acl_role';

/** The parts of an agent the enforcement layer reads. */
export interface AgentIdentity {
  readonly agentId: string;
  readonly permissions: PermissionLevel;
  readonly authType: AuthType;
  readonly usingMasterKey: boolean;
  readonly sessionToken?: string;
  readonly tenantId?: string;
  readonly aclRole?: string;
}
