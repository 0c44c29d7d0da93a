import { ParseAgentConfigError } from '../../core/errors';

/** What this library needs of a `pg` client (a `PoolClient` or a `Client`). */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  /** The backend's process id, known once connected: used to cancel its running query. */
  readonly processID?: number | null;
}

export interface PgPoolClientLike extends PgClientLike {
  release(error?: Error | boolean): void;
}

/** What this library needs of a `pg.Pool`: an application's existing pool fits. */
export interface PgPoolLike {
  connect(): Promise<PgPoolClientLike>;
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}

interface PgModule {
  Pool: new (config: { connectionString: string; max?: number }) => PgPoolLike;
}

/**
 * Loads the `pg` driver on first use: it is an optional peer dependency, needed only when the
 * PostgreSQL path is configured.
 */
export function loadPg(require_: (id: string) => unknown = require): PgModule {
  try {
    return require_('pg') as PgModule;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'MODULE_NOT_FOUND') {
      throw new ParseAgentConfigError(
        "ParseAgentModule.forRoot: `postgres` needs the 'pg' package. Install it with `npm install pg`, " +
          'or pass an existing pool as `postgres: { pool }`.',
      );
    }
    throw error;
  }
}

/** A pool for `uri` (the library owns it and ends it on shutdown). */
export function createPgPool(uri: string, max = 10): PgPoolLike {
  const { Pool } = loadPg();
  return new Pool({ connectionString: uri, max });
}
