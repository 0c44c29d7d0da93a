import { ParseAgentConfigError } from '../../core/errors';
import { errorCode } from '../probe';
import { readSchemasAsMaster } from './parse-server-probe';

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
 * One master-key read of Parse's schemas (the probe the start-up check makes): tells a health
 * check or a start-up script whether Parse Server answers, accepts the master key, and reaches its
 * database. Resolves (never rejects) with what it found (it rejects only on invalid connection
 * settings, e.g. a relative URL); it leaves nothing open that would keep the process alive.
 */
export async function checkParseServer(
  /** Where Parse Server is and its master key: the module's `parse` option fits as it is. */
  connection: { serverURL: string; appId: string; masterKey: string; javascriptKey?: string },
  options: CheckParseServerOptions = {},
): Promise<ParseServerCheck> {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const serverURL = connection.serverURL.replace(/\/+$/, '');
  try {
    new URL(serverURL);
  } catch {
    throw new ParseAgentConfigError(
      `parse.serverURL must be an absolute http(s) URL (got ${JSON.stringify(connection.serverURL)}).`,
    );
  }
  const at = `Parse Server at ${serverURL}`;
  const read = await readSchemasAsMaster(connection, timeoutMs);
  if (!read.answered) {
    return read.timedOut
      ? { ok: false, problem: 'timeout', message: `${at} did not answer within ${timeoutMs} ms` }
      : {
          ok: false,
          problem: 'unreachable',
          // The socket's code (ECONNREFUSED, ENOTFOUND, ...): a readiness answer that names the
          // cause saves a trip to the logs.
          message: `${at} is unreachable${causeOf(read.error)}`,
        };
  }
  const { status } = read;
  if (status >= 200 && status < 300 && read.json) return { ok: true };
  if (status === 401 || status === 403) {
    return {
      ok: false,
      problem: 'master_key_refused',
      status,
      message: `${at} refused the master key`,
    };
  }
  return {
    ok: false,
    problem: 'http_error',
    status,
    message: `${at} answered HTTP ${status} (is its database up?)`,
  };
}

/**
 * The socket's code (ECONNREFUSED, ENOTFOUND, ...), else the innermost cause's words: fetch refuses
 * some ports (a "bad port") before any socket opens, and that is the cause to name then.
 */
function causeOf(error: unknown): string {
  const code = errorCode(error);
  if (code) return ` (${code})`;
  let inner: unknown = error;
  for (let depth = 0; depth < 4 && (inner as { cause?: unknown })?.cause; depth++) {
    inner = (inner as { cause: unknown }).cause;
  }
  const words = inner !== error && inner instanceof Error ? inner.message : '';
  return words ? ` (${words})` : '';
}
