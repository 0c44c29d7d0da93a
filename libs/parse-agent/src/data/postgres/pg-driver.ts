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

/** A pool the library creates: `pg.Pool` is an event emitter. */
interface OwnedPgPool extends PgPoolLike {
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'connect' | 'remove', listener: (client: object) => void): unknown;
}

interface PgModule {
  Pool: new (config: { connectionString: string; max?: number }) => OwnedPgPool;
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

/**
 * A pool for `uri` (the library owns it and ends it on shutdown). An idle connection the server
 * closes (a PostgreSQL restart, a failover, an administrator's terminate) makes the pool emit
 * `error`; with no listener Node turns that into an uncaught exception that ends the whole app. The
 * pool drops that connection and opens a new one on the next query, so the error is only reported.
 *
 * `end()` resolves once every connection is really closed: `pg.Pool#end` resolves as soon as it has
 * asked them to close, and a server stopped right after would then fail the ones still closing.
 */
export function createPgPool(
  uri: string,
  max = 10,
  onIdleError: (error: Error) => void = () => undefined,
  closeWaitMs = 5_000,
): PgPoolLike {
  const { Pool } = loadPg();
  const pool = new Pool({ connectionString: uri, max });
  const open = new Set<object>();
  let ending = false;
  let allClosed: (() => void) | undefined;
  pool.on('connect', (client) => open.add(client));
  pool.on('remove', (client) => {
    open.delete(client);
    if (open.size === 0) allClosed?.();
  });
  pool.on('error', (error) => {
    if (!ending) onIdleError(error);
  });
  return {
    connect: () => pool.connect(),
    query: (text, values) => pool.query(text, values),
    end: async () => {
      ending = true;
      const closed = new Promise<void>((resolve) => {
        allClosed = resolve;
        if (open.size === 0) resolve();
      });
      await pool.end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        closed,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, closeWaitMs).unref())),
      ]);
      clearTimeout(timer);
    },
  };
}
