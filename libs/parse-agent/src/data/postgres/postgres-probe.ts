import { errorCode, isTimeout, PROBE_OK, scrub, withTimeout, type ProbeOutcome } from '../probe';
import type { PgPoolLike } from './pg-driver';

/**
 * One read of Parse's `_SCHEMA` table: proves the connection, the login and that the database is
 * the one Parse Server stores its data in. Driver messages never carry the password.
 */
export async function probePostgres(
  pool: Pick<PgPoolLike, 'query'>,
  uri: string | undefined,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const setting = uri ? 'postgres.uri' : 'postgres.pool';
  let where = 'the pool in postgres.pool';
  if (uri) {
    try {
      const url = new URL(uri);
      where = `${url.hostname}:${url.port || '5432'}${url.pathname.length > 1 ? ` (database "${decodeURIComponent(url.pathname.slice(1))}")` : ''}`;
    } catch {
      where = 'the server in postgres.uri';
    }
  }
  try {
    await withTimeout(timeoutMs, () => pool.query('SELECT 1 FROM "_SCHEMA" LIMIT 1'));
    return PROBE_OK;
  } catch (error) {
    const code = errorCode(error);
    let message: string;
    if (isTimeout(error)) message = `PostgreSQL at ${where} did not answer within ${timeoutMs} ms.`;
    else if (code === '42P01') {
      message = `PostgreSQL at ${where} has no "_SCHEMA" table: point ${setting} at the database Parse Server stores its data in (its databaseURI).`;
    } else {
      const text = scrub((error as Error)?.message ?? String(error), uri);
      message = `PostgreSQL at ${where} refused the connection or the query: ${text}${code && !text.includes(code) ? ` (${code})` : ''}.`;
    }
    return { ok: false, setting, transient: false, message };
  }
}
