import { AgentValidationError } from '../../core/errors';
import { printClassAs } from '../../core/secret-display';
import { PARSE_DEFAULT_PROTECTED_FIELDS } from '../parse-server-defaults';
import type { ParseRestClient } from '../parse-rest/parse-rest-client';
import { PgCatalog } from './pg-catalog';
import { createPgPool, type PgPoolLike } from './pg-driver';
import { PgEmbeddingTable, type PgEmbeddingTableOptions } from './pg-embedding-table';
import { PgPrincipalResolver } from './pg-principals';

export interface PostgresDataPathOptions {
  /** A connection string for a pool this library creates (and ends on shutdown). */
  uri?: string;
  /** An application's existing `pg.Pool` (left open on shutdown). */
  pool?: PgPoolLike;
  /** Connections in a pool created from `uri` (default 10). */
  maxConnections?: number;
  /** How long `_SCHEMA` (fields, CLP, protectedFields) is cached (ms, default 30 000). */
  schemaCacheTtlMs?: number;
  /** How long a session token's user is remembered (ms, default 10 000). */
  sessionCacheTtlMs?: number;
  /** How long role expansions are remembered (ms, default 30 000). */
  roleCacheTtlMs?: number;
  /** Time limit for resolving a session token through `/users/me` (ms, default 5 000). */
  sessionLookupTimeoutMs?: number;
  /** `statement_timeout` for reads that carry no time limit of their own (ms, default 30 000). */
  statementTimeoutMs?: number;
  /**
   * Parse Server's `protectedFields` option, if the app sets one; default Parse's own default
   * `{ _User: { '*': ['email'] } }`. Merged into each class's CLP as Parse Server does.
   */
  protectedFields?: Record<string, Record<string, readonly string[]>>;
  /** From how many rows a sequential scan counts as a collection scan in `explain` (default 1 000). */
  collscanMinRows?: number;
  /** The side table of chunk vectors (semantic_search): pgvector `auto` (default), `on` or `off`. */
  vectors?: PgEmbeddingTableOptions;
}

/**
 * Shared state of the direct PostgreSQL path: the pool, the `_SCHEMA` catalog and the principal
 * resolver. One per module; `invalidate()` drops the cached schemas and role expansions.
 */
export class PostgresDataAccess {
  readonly pool: PgPoolLike;
  readonly catalog: PgCatalog;
  readonly principals: PgPrincipalResolver;
  /** The side table of chunk vectors in Parse's database (semantic_search). */
  readonly embeddings: PgEmbeddingTable;
  protected readonly ownsPool: boolean;
  /** Session tokens are resolved through Parse REST's `/users/me`. */
  readonly resolvesSessions: boolean;

  constructor(
    readonly options: PostgresDataPathOptions,
    parse?: ParseRestClient,
    /** Told when an idle connection of the library's own pool is closed by the server. */
    warn?: (message: string) => void,
  ) {
    this.resolvesSessions = !!parse;
    if (options.pool) {
      this.pool = options.pool;
      this.ownsPool = false;
    } else if (typeof options.uri === 'string' && options.uri) {
      this.pool = createPgPool(options.uri, options.maxConnections ?? 10, (error) =>
        warn?.(
          `PostgreSQL closed an idle connection of the direct path's pool (${error.message}); ` +
            'the next query opens a new one.',
        ),
      );
      this.ownsPool = true;
    } else {
      throw new AgentValidationError('postgres needs a uri or a pool.');
    }
    const run = async (q: { text: string; values: unknown[] }) =>
      (await this.pool.query(q.text, q.values)).rows;
    this.catalog = new PgCatalog(run, {
      ttlMs: options.schemaCacheTtlMs,
      serverProtectedFields: options.protectedFields ?? PARSE_DEFAULT_PROTECTED_FIELDS,
    });
    this.embeddings = new PgEmbeddingTable(this.pool, options.vectors);
    this.principals = new PgPrincipalResolver(run, parse, {
      sessionTtlMs: options.sessionCacheTtlMs,
      roleTtlMs: options.roleCacheTtlMs,
      sessionLookupTimeoutMs: options.sessionLookupTimeoutMs,
    });
  }

  /** Forget cached schemas, CLP and role expansions (after a schema or role change). */
  invalidate(): void {
    this.catalog.invalidate();
    this.principals.invalidate();
  }

  /** Ends the pool if this library created it; an application's own pool is left alone. */
  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }
}

// Holds the connection string (with its password) and caches keyed by session token.
printClassAs(PostgresDataAccess);
