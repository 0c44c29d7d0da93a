import type { AgentIdentity } from '../../core/agent-identity';
import {
  AccessDeniedError,
  AgentUnauthorizedError,
  AgentValidationError,
  ParseRequestError,
} from '../../core/errors';
import { BLANK_IDENTITY_REASON, identityValue } from '../../core/identity-value';
import { INSPECT, inspectAs, shownSecret } from '../../core/secret-display';
import {
  DATA_PATH_RANK,
  PARSE_SERVER_FIRST,
  type DataClassSpec,
  type DataCreateResult,
  type AggregateOptions,
  type DistinctSpec,
  type DataFindQuery,
  type DataPrincipals,
  type DataOperation,
  type DataPath,
  type DataPathProvider,
  type DataRow,
} from '../../ports/data-path';
import type { ParseAuth, ParseRestClient } from './parse-rest-client';

/** Which database Parse Server stores its data in, as the operator declares it. */
export type ParseDatabaseKind = 'mongo' | 'postgres';

/** Parse REST bound to one identity: Parse Server enforces ACL, CLP and protectedFields itself. */
export class ParseRestDataPath implements DataPath {
  readonly kind = 'parse-rest';
  aggregate?: DataPath['aggregate'];
  distinct?: DataPath['distinct'];
  /** Parse's MongoDB `/aggregate` runs on the stored documents, credential columns included. */
  aggregatesStoredDocuments?: boolean;

  /** Printed with its credential as a kind and a fingerprint, never the token. */
  [INSPECT](
    _depth: number,
    options: object,
    inspect: (value: unknown, options?: object) => string,
  ): string {
    return inspectAs('ParseRestDataPath', this.toJSON(), options, inspect);
  }

  toJSON(): Record<string, unknown> {
    return 'masterKey' in this.auth
      ? { kind: this.kind, auth: 'master key' }
      : {
          kind: this.kind,
          auth: 'session token',
          session_token: shownSecret(this.auth.sessionToken),
        };
  }

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
      this.aggregatesStoredDocuments = true;
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
    const values = await this.client.distinct(className, spec.field, spec.where, options.signal);
    if (values.some(isAlteredByAggregateRouter)) {
      throw new AgentValidationError(
        `distinct cannot list the values of '${spec.field}' through Parse REST: they are objects, and Parse Server's /aggregate removes every key that is not a plain identifier from each one, so the values would differ from what is stored. Read the field with query_class instead.`,
      );
    }
    return values;
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

  // Writes run as the same identity as reads: a session writes with its token, so Parse Server
  // enforces that user's ACL and CLP on every change.
  create(className: string, values: DataRow, signal?: AbortSignal): Promise<DataCreateResult> {
    return this.client.create(className, values, this.auth, signal);
  }

  update(
    className: string,
    objectId: string,
    values: DataRow,
    signal?: AbortSignal,
  ): Promise<{ updatedAt?: string }> {
    return this.client.update(className, objectId, values, this.auth, signal);
  }

  delete(className: string, objectId: string, signal?: AbortSignal): Promise<void> {
    return this.client.delete(className, objectId, this.auth, signal);
  }

  /** Schema changes need the master key; a session identity is refused rather than elevated. */
  createClass(className: string, spec: DataClassSpec, signal?: AbortSignal): Promise<void> {
    this.assertMaster('create a class');
    return this.client.createClass(className, spec, signal);
  }

  deleteClass(className: string, signal?: AbortSignal): Promise<void> {
    this.assertMaster('delete a class');
    return this.client.deleteClass(className, signal);
  }

  async principals(signal?: AbortSignal): Promise<DataPrincipals> {
    if ('masterKey' in this.auth) return { master: true };
    // Once per bound path (one agent): a failed lookup is not remembered.
    this.principalCache ??= this.client
      .sessionPrincipals(this.auth.sessionToken, signal)
      .catch((error: unknown) => {
        this.principalCache = undefined;
        throw error;
      });
    return { master: false, principals: await this.principalCache };
  }

  protected principalCache?: Promise<string[]>;

  async refreshPrincipals(): Promise<void> {
    this.principalCache = undefined;
  }

  protected assertMaster(action: string): void {
    if (!('masterKey' in this.auth)) {
      throw new AccessDeniedError(
        `A session-token agent cannot ${action}: schema changes need the master key (use a master-key agent).`,
        { kind: 'clp_denied' },
      );
    }
  }
}

/**
 * Serves session-token and master-key identities for reads and writes. ACL-scoped identities (aclUser,
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
    if (
      operation === 'find' ||
      operation === 'get' ||
      operation === 'count' ||
      operation === 'write'
    )
      return undefined;
    // Served by the policed reader as a bounded scan of finds (no stored vectors on this path);
    // a direct database path, ranked first, serves it whenever one is configured.
    if (operation === 'vector_search') return undefined;
    const analytics = ['aggregate', 'group_by', 'group_by_date', 'distinct'].includes(operation);
    if (analytics && !identity.usingMasterKey) {
      return `Parse REST /aggregate ignores ACL, CLP and protectedFields, so it serves '${operation}' only to master-key agents`;
    }
    if (operation === 'distinct') return undefined;
    if (operation === 'search') {
      return 'full-text search needs the direct MongoDB path (Atlas Search); configure `mongo`';
    }
    if (analytics && this.database === 'mongo') return undefined;
    if (analytics) {
      return this.database === 'postgres'
        ? `Parse Server on PostgreSQL mistranslates aggregation pipelines, so '${operation}' is not sent to its /aggregate`
        : `'${operation}' needs Parse REST /aggregate, which is only used when parse.database is declared 'mongo'`;
    }
    return `Parse REST does not serve '${operation}'`;
  }

  /** Row reads and writes here first: Parse Server enforces ACL and CLP and runs triggers itself. */
  rank(operation: DataOperation): number {
    return PARSE_SERVER_FIRST.has(operation) ? DATA_PATH_RANK.preferred : DATA_PATH_RANK.fallback;
  }

  /**
   * The master key only for an identity that says it is a master-key agent and carries no token;
   * a blank token, or a scoped identity without one, is refused rather than read as "no identity".
   */
  bind(identity: AgentIdentity): ParseRestDataPath {
    let auth: ParseAuth;
    if (identity.sessionToken !== undefined) {
      auth = { sessionToken: identityValue('sessionToken', identity.sessionToken)! };
    } else if (identity.authType === 'master_key') {
      auth = { masterKey: true };
    } else {
      throw new AgentUnauthorizedError(
        `A ${identity.authType} identity without a session token cannot use Parse REST; it is refused rather than sent with the master key.`,
        { reason: BLANK_IDENTITY_REASON },
      );
    }
    return new ParseRestDataPath(this.client, auth, this.database);
  }
}

/** Typed values whose keys are all identifiers: /aggregate leaves them as they are. */
const INTACT_TYPES: ReadonlySet<string> = new Set([
  'Pointer',
  'Date',
  'File',
  'GeoPoint',
  'Polygon',
  'Bytes',
  'Relation',
]);

/**
 * An object value of an Object (or Array) column: Parse Server's /aggregate deletes the keys of
 * each such value that are not identifiers (`naïve`, `with space`, `a-b`), so it cannot be trusted
 * to be what is stored. Typed values (Pointer, Date...) have identifier keys only.
 */
function isAlteredByAggregateRouter(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const type = (value as Record<string, unknown>).__type;
  return !(typeof type === 'string' && INTACT_TYPES.has(type));
}
