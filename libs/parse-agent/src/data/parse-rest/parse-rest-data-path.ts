import type { AgentIdentity } from '../../core/agent-identity';
import { ParseRequestError } from '../../core/errors';
import type {
  AggregateOptions,
  DistinctSpec,
  DataFindQuery,
  DataOperation,
  DataPath,
  DataPathProvider,
  DataRow,
} from '../../ports/data-path';
import type { ParseAuth, ParseRestClient } from './parse-rest-client';

/** Which database Parse Server stores its data in, as the operator declares it. */
export type ParseDatabaseKind = 'mongo' | 'postgres';

/** Parse REST bound to one identity: Parse Server enforces ACL, CLP and protectedFields itself. */
export class ParseRestDataPath implements DataPath {
  readonly kind = 'parse-rest';
  aggregate?: DataPath['aggregate'];
  distinct?: DataPath['distinct'];

  constructor(
    protected readonly client: ParseRestClient,
    protected readonly auth: ParseAuth,
    database?: ParseDatabaseKind,
  ) {
    // /aggregate and /distinct ignore ACL, CLP and protectedFields: only a master-key binding has them.
    if (!('masterKey' in auth)) return;
    this.distinct = (className, spec, options) => this.restDistinct(className, spec, options);
    // Parse's PostgreSQL adapter mistranslates pipelines: only a MongoDB-backed server gets them.
    if (database === 'mongo') {
      this.aggregate = (className, pipeline, options) =>
        this.client.aggregate(className, pipeline, options?.signal);
    }
  }

  protected async restDistinct(
    className: string,
    spec: DistinctSpec,
    options: AggregateOptions = {},
  ): Promise<unknown[]> {
    // REST distinct has no limit: every value comes back, so the tool can sort before it cuts.
    return this.client.distinct(className, spec.field, spec.where, options.signal);
  }

  find(className: string, query: DataFindQuery, signal?: AbortSignal): Promise<DataRow[]> {
    return this.client.find(className, query, this.auth, signal);
  }

  get(
    className: string,
    objectId: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    signal?: AbortSignal,
  ): Promise<DataRow | undefined> {
    return this.client
      .get(className, objectId, query, this.auth, signal)
      .catch((error: unknown) => {
        // Parse answers 101 both for a missing object and for one the identity may not read.
        if (error instanceof ParseRequestError && error.parseCode === 101) return undefined;
        throw error;
      });
  }

  count(className: string, where: Record<string, unknown>, signal?: AbortSignal): Promise<number> {
    return this.client.count(className, where, this.auth, signal);
  }
}

/**
 * Serves session-token and master-key identities for reads. ACL-scoped identities (aclUser,
 * aclRole) are refused: Parse REST has no way to act as a user without their session.
 */
export class ParseRestDataPathProvider implements DataPathProvider {
  readonly kind = 'parse-rest';

  /** `database`: what Parse Server runs on, when the operator declares it (`parse.database`). */
  constructor(
    protected readonly client: ParseRestClient,
    protected readonly database?: ParseDatabaseKind,
  ) {}

  refusal(operation: DataOperation, identity: AgentIdentity): string | undefined {
    if (identity.authType === 'acl_user' || identity.authType === 'acl_role') {
      return 'Parse REST cannot enforce an aclUser/aclRole scope';
    }
    if (operation === 'find' || operation === 'get' || operation === 'count') return undefined;
    const analytics = ['aggregate', 'group_by', 'group_by_date', 'distinct'].includes(operation);
    if (analytics && !identity.usingMasterKey) {
      return `Parse REST /aggregate ignores ACL, CLP and protectedFields, so it serves '${operation}' only to master-key agents`;
    }
    if (operation === 'distinct') return undefined;
    if (analytics && this.database === 'mongo') return undefined;
    if (analytics) {
      return this.database === 'postgres'
        ? `Parse Server on PostgreSQL mistranslates aggregation pipelines, so '${operation}' is not sent to its /aggregate`
        : `'${operation}' needs Parse REST /aggregate, which is only used when parse.database is declared 'mongo'`;
    }
    return `Parse REST does not serve '${operation}'`;
  }

  bind(identity: AgentIdentity): ParseRestDataPath {
    const auth: ParseAuth = identity.sessionToken
      ? { sessionToken: identity.sessionToken }
      : { masterKey: true };
    return new ParseRestDataPath(this.client, auth, this.database);
  }
}
