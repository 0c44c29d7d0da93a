import {
  AgentCancelledError,
  InvalidQueryError,
  ParseAgentError,
  ParseRequestError,
} from '../../core/errors';
import type { PgClientLike, PgPoolLike } from './pg-driver';
import type { SqlQuery } from './sql-params';

/** PostgreSQL stopped the statement at its `statement_timeout` (wire: `timeout`). */
export class DatabaseTimeoutError extends ParseAgentError {
  readonly errorCode = 'timeout';
  constructor(readonly ms: number) {
    super(
      `The database stopped the query after ${ms} ms. Narrow the where filter, lower the limit, or group on an indexed field.`,
    );
  }
}

export interface ReadOptions {
  signal?: AbortSignal;
  /** `statement_timeout` for every statement of the transaction (ms); default 30 000. */
  timeoutMs?: number;
}

/** One statement runner inside the transaction. */
export type RunQuery = (query: SqlQuery) => Promise<Record<string, unknown>[]>;

const QUERY_CANCELED = '57014';

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError' && reason.name !== 'TimeoutError') {
    return reason;
  }
  return new AgentCancelledError();
}

/**
 * Runs `work` in a read-only transaction on one pooled connection, with `SET LOCAL
 * statement_timeout` from the call's time limit. When the signal aborts, the backend's running
 * statement is cancelled with `pg_cancel_backend` from another connection, so the database stops
 * working instead of the result only being ignored.
 */
export async function readOnly<T>(
  pool: PgPoolLike,
  work: (run: RunQuery) => Promise<T>,
  options: ReadOptions = {},
): Promise<T> {
  const { signal } = options;
  if (signal?.aborted) throw abortError(signal);
  const timeoutMs = Math.max(1, Math.min(Math.floor(options.timeoutMs ?? 30_000), 2_147_483_647));
  const client = await pool.connect();
  let cancelling: Promise<unknown> | undefined;
  const onAbort = () => {
    const pid = client.processID;
    if (typeof pid === 'number') {
      cancelling = pool.query('SELECT pg_cancel_backend($1::int)', [pid]).catch(() => undefined);
    }
  };
  let broken = false;
  try {
    if (signal?.aborted) throw abortError(signal);
    signal?.addEventListener('abort', onAbort, { once: true });
    await client.query('BEGIN TRANSACTION READ ONLY');
    await client.query(`SELECT set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
    const run: RunQuery = async (query) => {
      if (signal?.aborted) throw abortError(signal);
      return (await client.query(query.text, query.values)).rows;
    };
    const result = await work(run);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await rollback(client).catch(() => {
      broken = true;
    });
    if (signal?.aborted) {
      await cancelling;
      throw abortError(signal);
    }
    throw translate(error, timeoutMs);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await cancelling;
    (client as { release?: (e?: boolean) => void }).release?.(broken);
  }
}

async function rollback(client: PgClientLike): Promise<void> {
  await client.query('ROLLBACK');
}

/** Database errors as the agent should read them: what went wrong with its query, nothing more. */
export function translate(error: unknown, timeoutMs: number): Error {
  if (error instanceof ParseAgentError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = (error as { message?: unknown } | null)?.message;
  if (code === QUERY_CANCELED) return new DatabaseTimeoutError(timeoutMs);
  if (typeof code === 'string' && (code.startsWith('22') || code === '2201B')) {
    // Data exceptions (bad regex, value out of range): the agent's input, so say what it was.
    return new InvalidQueryError(
      `The database refused a value in the query: ${typeof message === 'string' ? message : code}.`,
    );
  }
  return new ParseRequestError(
    `Database error${typeof code === 'string' ? ` ${code}` : ''} on the PostgreSQL path.`,
  );
}
