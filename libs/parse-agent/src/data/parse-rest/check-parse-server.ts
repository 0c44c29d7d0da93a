import { ParseRequestError } from '../../core/errors';
import { ParseRestClient } from './parse-rest-client';

/** Why Parse Server failed the check. */
export type ParseServerProblem = 'master_key_refused' | 'http_error' | 'timeout' | 'unreachable';

/** What `checkParseServer` found: `ok`, or the problem in words an operator can act on. */
export type ParseServerCheck =
  | { ok: true }
  | {
      ok: false;
      problem: ParseServerProblem;
      /** The HTTP status Parse Server answered with (`master_key_refused`, `http_error`). */
      status?: number;
      /** One sentence naming the server and what failed; never contains a key. */
      message: string;
    };

export interface CheckParseServerOptions {
  /** How long Parse Server may take to answer (ms, default 2 000). */
  timeoutMs?: number;
}

/**
 * One master-key read of the `_User` schema: tells a health check or a start-up script whether
 * Parse Server answers, accepts the master key, and reaches its database. Resolves (never rejects)
 * with what it found (it rejects only on invalid connection settings, e.g. a relative URL); the
 * connection it opens is closed before it resolves.
 */
export async function checkParseServer(
  /** Where Parse Server is and its master key: the module's `parse` option fits as it is. */
  connection: { serverURL: string; appId: string; masterKey: string; javascriptKey?: string },
  options: CheckParseServerOptions = {},
): Promise<ParseServerCheck> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const client = new ParseRestClient({ ...connection, maxSockets: 1 });
  const at = `Parse Server at ${client.serverURL}`;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    await client.request('GET', '/schemas/_User', undefined, { masterKey: true }, deadline);
    return { ok: true };
  } catch (error) {
    const status = error instanceof ParseRequestError ? error.status : undefined;
    if (status === 401 || status === 403) {
      return {
        ok: false,
        problem: 'master_key_refused',
        status,
        message: `${at} refused the master key`,
      };
    }
    if (status !== undefined) {
      return {
        ok: false,
        problem: 'http_error',
        status,
        message: `${at} answered HTTP ${status} (is its database up?)`,
      };
    }
    // The deadline itself, not the error's class: the client reports an abort in its own terms.
    if (deadline.aborted) {
      return {
        ok: false,
        problem: 'timeout',
        message: `${at} did not answer within ${timeoutMs} ms`,
      };
    }
    // The socket's code (ECONNREFUSED, ENOTFOUND, ...), which the client puts in its message:
    // a readiness answer that names the cause saves a trip to the logs.
    const cause = /\(([A-Z][A-Z_]+)\)/.exec(error instanceof Error ? error.message : '')?.[1];
    return {
      ok: false,
      problem: 'unreachable',
      message: `${at} is unreachable${cause ? ` (${cause})` : ''}`,
    };
  } finally {
    client.close();
  }
}
