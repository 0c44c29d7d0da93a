import { ParseAgentConfigError } from '../core/errors';
import type { PgPoolLike } from '../data/postgres/pg-driver';
import { isPlainObject } from '../core/plain-object';

/**
 * What the module does when a setting is found wrong at start-up: `'fail'` (the default) fails the
 * boot, `'warn'` logs and starts anyway, `'off'` checks nothing.
 */
export type StartupCheckMode = 'fail' | 'warn' | 'off';

export interface StartupCheckOptions {
  mode?: StartupCheckMode;
  /** Time limit of one probe: one request to Parse Server, one query per database (default 5 000 ms). */
  timeoutMs?: number;
  /**
   * How long a Parse Server that cannot be reached yet is waited for, in the background, before the
   * check reports it (default 30 000 ms). Boot does not wait for it: an app that mounts Parse Server
   * itself only serves it once it listens, after the module has booted.
   */
  parseWaitMs?: number;
}

export type ResolvedStartupCheck = Required<StartupCheckOptions>;

export const DEFAULT_STARTUP_CHECK: ResolvedStartupCheck = Object.freeze({
  mode: 'fail',
  timeoutMs: 5_000,
  parseWaitMs: 30_000,
});

const MODES: readonly StartupCheckMode[] = ['fail', 'warn', 'off'];

/** The `startupCheck` option with its defaults; throws a ParseAgentConfigError naming the field. */
export function resolveStartupCheck(
  value: StartupCheckMode | StartupCheckOptions | undefined,
): ResolvedStartupCheck {
  const fail = (problem: string): never => {
    throw new ParseAgentConfigError(`ParseAgentModule.forRoot: ${problem}`);
  };
  if (value === undefined) return DEFAULT_STARTUP_CHECK;
  const options: StartupCheckOptions = typeof value === 'string' ? { mode: value } : value;
  if (!isPlainObject(options as unknown)) {
    return fail(
      `startupCheck must be 'fail', 'warn', 'off' or { mode, timeoutMs, parseWaitMs } (got ${JSON.stringify(value)}).`,
    );
  }
  const mode = options.mode ?? DEFAULT_STARTUP_CHECK.mode;
  if (!MODES.includes(mode)) {
    fail(`startupCheck mode must be 'fail', 'warn' or 'off' (got ${JSON.stringify(mode)}).`);
  }
  for (const key of ['timeoutMs', 'parseWaitMs'] as const) {
    const ms = options[key];
    if (ms !== undefined && !(typeof ms === 'number' && Number.isFinite(ms) && ms > 0)) {
      fail(`startupCheck.${key} must be a positive number of milliseconds.`);
    }
  }
  return {
    mode,
    timeoutMs: options.timeoutMs ?? DEFAULT_STARTUP_CHECK.timeoutMs,
    parseWaitMs: options.parseWaitMs ?? DEFAULT_STARTUP_CHECK.parseWaitMs,
  };
}

/**
 * The result of one probe. `setting` names the option to fix; `transient` marks a server that
 * cannot be reached (yet) or answers 5xx, as opposed to one that answered and refused.
 */
export type ProbeOutcome =
  { ok: true } | { ok: false; setting: string; message: string; transient: boolean };

const OK: ProbeOutcome = { ok: true };

/** A URL as it may be logged: scheme, host, port and path; never user, password or query. */
export function redactedEndpoint(uri: string): string {
  try {
    const url = new URL(uri);
    const path = url.pathname.replace(/\/+$/, '');
    return `${url.protocol}//${url.host}${path}`;
  } catch {
    return '(an unparsable URL)';
  }
}

/** Removes the password of `uri` wherever a driver's message might quote it. */
function scrub(message: string, uri: string | undefined): string {
  if (!uri) return message;
  let password: string;
  try {
    password = decodeURIComponent(new URL(uri).password);
  } catch {
    return message;
  }
  return password ? message.split(password).join('***') : message;
}

function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

const isTimeout = (error: unknown) =>
  (error as { name?: unknown })?.name === 'TimeoutError' ||
  (error as { name?: unknown })?.name === 'StartupProbeTimeout';

/** Runs `work` with a time limit; the signal aborts what it started. */
async function withTimeout<T>(
  timeoutMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no answer within ${timeoutMs} ms`);
      error.name = 'StartupProbeTimeout';
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([work(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

interface HttpAnswer {
  status: number;
  /** Parse's `error` text, when the body is Parse's JSON error shape. */
  error?: string;
  json: boolean;
}

async function get(url: string, headers: Record<string, string>, signal: AbortSignal) {
  const res = await fetch(url, { headers, signal });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { status: res.status, json: false } satisfies HttpAnswer;
  }
  const error = (body as { error?: unknown })?.error;
  return {
    status: res.status,
    json: true,
    error: typeof error === 'string' ? error : undefined,
  } satisfies HttpAnswer;
}

export interface ParseProbeTarget {
  serverURL: string;
  appId: string;
  masterKey: string;
  javascriptKey?: string;
}

/**
 * One master-key-only request (GET /schemas): proves the URL, the application id and the master key
 * at once. A 403 is told apart with a second request without the master key, because Parse Server
 * answers "unauthorized" both to an unknown application id and to a wrong master key when it
 * expects a client key: "Permission denied" there means the id was accepted and the key was not.
 */
export async function probeParse(
  target: ParseProbeTarget,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const base = target.serverURL.replace(/\/+$/, '');
  const where = redactedEndpoint(base);
  const clientHeaders: Record<string, string> = { 'X-Parse-Application-Id': target.appId };
  if (target.javascriptKey) clientHeaders['X-Parse-JavaScript-Key'] = target.javascriptKey;
  let answer: HttpAnswer;
  try {
    answer = await withTimeout(timeoutMs, (signal) =>
      get(`${base}/schemas`, { ...clientHeaders, 'X-Parse-Master-Key': target.masterKey }, signal),
    );
  } catch (error) {
    return {
      ok: false,
      setting: 'parse.serverURL',
      transient: true,
      message: isTimeout(error)
        ? `Parse Server at ${where} did not answer within ${timeoutMs} ms.`
        : `Parse Server at ${where} cannot be reached (${errorCode(error) ?? (error as Error)?.message ?? 'no details'}). Check parse.serverURL and that Parse Server is running.`,
    };
  }
  if (answer.status >= 200 && answer.status < 300 && answer.json) return OK;
  if (answer.status === 401 || answer.status === 403) {
    const second = await withTimeout(timeoutMs, (signal) =>
      get(`${base}/serverInfo`, clientHeaders, signal),
    ).catch(() => undefined);
    return second &&
      (second.status === 401 || second.status === 403) &&
      second.error !== 'unauthorized'
      ? {
          ok: false,
          setting: 'parse.masterKey',
          transient: false,
          message: `Parse Server at ${where} accepted the application id but refused parse.masterKey (HTTP ${answer.status} "${answer.error ?? ''}"). Set parse.masterKey to the server's masterKey; if it is right, allow this host in Parse Server's masterKeyIps.`,
        }
      : {
          ok: false,
          setting: 'parse.appId',
          transient: false,
          message: `Parse Server at ${where} refused the application id "${target.appId}"${target.javascriptKey ? ' with parse.javascriptKey' : ''} (HTTP ${answer.status} "${answer.error ?? ''}"). Check parse.appId${target.javascriptKey ? ' and parse.javascriptKey' : ''}; if they are right, parse.masterKey is wrong (Parse Server takes a right master key without a client key).`,
        };
  }
  if (answer.status >= 500) {
    return {
      ok: false,
      setting: 'parse.serverURL',
      transient: true,
      message: `Parse Server at ${where} answers HTTP ${answer.status}${answer.error ? ` "${answer.error}"` : ''} (is its database up?).`,
    };
  }
  return {
    ok: false,
    setting: 'parse.serverURL',
    transient: false,
    message:
      answer.status === 404 || !answer.json
        ? `${where} answered HTTP ${answer.status}${answer.json ? '' : ' with a body that is not JSON'}: no Parse Server is mounted there. Set parse.serverURL to the URL Parse Server is mounted at, e.g. http://localhost:1337/parse.`
        : `Parse Server at ${where} answered HTTP ${answer.status}${answer.error ? ` "${answer.error}"` : ''} to a master-key schema read. Check parse.serverURL.`,
  };
}

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
    return OK;
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

/** One read on the MongoDB path (`probe` comes from the data path); never quotes the password. */
export async function probeMongo(
  probe: (signal: AbortSignal) => Promise<void>,
  uri: string | undefined,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const setting = uri ? 'mongo.uri' : 'mongo.client';
  const where = uri ? redactedEndpoint(uri) : 'the client in mongo.client';
  try {
    await withTimeout(timeoutMs, probe);
    return OK;
  } catch (error) {
    const message = isTimeout(error)
      ? `MongoDB at ${where} did not answer within ${timeoutMs} ms.`
      : `MongoDB at ${where} refused the connection or the query: ${scrub((error as Error)?.message ?? String(error), uri)}.`;
    return { ok: false, setting, transient: false, message };
  }
}

/** The boot failure: every problem on its own line, each starting with the setting to fix. */
export function startupCheckError(
  problems: Array<{ setting: string; message: string }>,
): ParseAgentConfigError {
  return new ParseAgentConfigError(
    `ParseAgentModule start-up check failed:\n${problems.map((p) => `  - ${p.setting}: ${p.message}`).join('\n')}\nFix the setting, or set startupCheck: 'warn' to log this and start anyway.`,
  );
}
