// `nestjs-parse-agent/auth`: the parts behind the shipped guards (the guards, principals and
// bindAgentToPrincipal are root names): the Parse session verifier, tenant bindings, the
// constant-time secret comparison, and the row-ACL helpers custom tools and agent methods use on
// the direct database paths (the principal set of an agent, as a MongoDB match or a SQL clause).
export { ParseSessionVerifier, SessionCheckUnavailableError } from './auth/session-verifier';
export type { SessionVerifierOptions, VerifiedSession } from './auth/session-verifier';
export type { ExtraAgentOptions } from './auth/bind-agent-to-principal';
export { secretsEqual } from './auth/secrets-equal';

// Row ACLs on the direct database paths
export { agentPrincipals, refreshAgentPrincipals } from './security/agent-principals';
export type { PrincipalContext } from './security/agent-principals';
export {
  aclReadMatchStage,
  aclReadSqlClause,
  aclWriteMatchStage,
  aclWriteSqlClause,
} from './security/acl-match';
export type { AclMatchStage, AclSqlClause, AclSqlOptions } from './security/acl-match';
