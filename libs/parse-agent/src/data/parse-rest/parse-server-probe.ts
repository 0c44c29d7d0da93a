import {
  errorCode,
  isTimeout,
  PROBE_OK,
  redactedEndpoint,
  withTimeout,
  type ProbeOutcome,
} from '../probe';

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

/** What one master-key read of Parse's schemas met: Parse's answer, or no answer at all. */
export type SchemaReadResult =
  ({ answered: true } & HttpAnswer) | { answered: false; timedOut: boolean; error: unknown };

function clientHeaders(target: ParseProbeTarget): Record<string, string> {
  const headers: Record<string, string> = { 'X-Parse-Application-Id': target.appId };
  if (target.javascriptKey) headers['X-Parse-JavaScript-Key'] = target.javascriptKey;
  return headers;
}

/**
 * The probe of Parse Server, shared by the start-up check (`probeParse`) and the public
 * `checkParseServer`: one master-key-only request (GET /schemas) that proves the URL, the
 * application id and the master key at once, and that Parse reaches its database. Never rejects.
 */
export async function readSchemasAsMaster(
  target: ParseProbeTarget,
  timeoutMs: number,
): Promise<SchemaReadResult> {
  const base = target.serverURL.replace(/\/+$/, '');
  const headers = { ...clientHeaders(target), 'X-Parse-Master-Key': target.masterKey };
  try {
    const answer = await withTimeout(timeoutMs, (signal) =>
      get(`${base}/schemas`, headers, signal),
    );
    return { answered: true, ...answer };
  } catch (error) {
    return { answered: false, timedOut: isTimeout(error), error };
  }
}

/**
 * The start-up check's probe (see `readSchemasAsMaster`), in the settings an operator fixes. A 403
 * is told apart with a second request without the master key, because Parse Server answers
 * "unauthorized" both to an unknown application id and to a wrong master key when it expects a
 * client key: "Permission denied" there means the id was accepted and the key was not.
 */
export async function probeParse(
  target: ParseProbeTarget,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const base = target.serverURL.replace(/\/+$/, '');
  const where = redactedEndpoint(base);
  const read = await readSchemasAsMaster(target, timeoutMs);
  if (!read.answered) {
    const { error } = read;
    return {
      ok: false,
      setting: 'parse.serverURL',
      transient: true,
      message: read.timedOut
        ? `Parse Server at ${where} did not answer within ${timeoutMs} ms.`
        : `Parse Server at ${where} cannot be reached (${errorCode(error) ?? (error as Error)?.message ?? 'no details'}). Check parse.serverURL and that Parse Server is running.`,
    };
  }
  const answer: HttpAnswer = read;
  if (answer.status >= 200 && answer.status < 300 && answer.json) return PROBE_OK;
  if (answer.status === 401 || answer.status === 403) {
    const second = await withTimeout(timeoutMs, (signal) =>
      get(`${base}/serverInfo`, clientHeaders(target), signal),
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
