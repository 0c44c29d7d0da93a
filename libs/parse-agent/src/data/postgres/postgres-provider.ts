import type { AgentIdentity } from '../../core/agent-identity';
import type { DataOperation, DataPathProvider } from '../../ports/data-path';
import type { PostgresDataAccess } from './postgres-data-access';
import { PostgresDataPath } from './postgres-data-path';

/**
 * Serves every read operation for every identity (session token, aclUser, aclRole, master key);
 * writes stay with Parse REST, where Parse Server runs its triggers and validation.
 */
export class PostgresDataPathProvider implements DataPathProvider {
  readonly kind = 'postgres';

  constructor(readonly access: PostgresDataAccess) {}

  /** Drops the cached schemas and role expansions of the shared access. */
  invalidate(): void {
    this.access.invalidate();
  }

  refusal(operation: DataOperation, identity: AgentIdentity): string | undefined {
    if (operation === 'write') return 'the PostgreSQL path only reads';
    if (operation === 'search') return 'full-text search runs on MongoDB Atlas Search only';
    if (identity.sessionToken && !this.access.resolvesSessions) {
      return 'session tokens need Parse REST to resolve the user';
    }
    return undefined;
  }

  bind(identity: AgentIdentity): PostgresDataPath {
    return new PostgresDataPath(this.access, identity);
  }
}
