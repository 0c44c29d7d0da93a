import { TEST_ENV } from './test-stack';

export interface RestAuth {
  sessionToken?: string;
  masterKey?: boolean;
}

export class ParseRestError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ParseRestError';
  }
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: is the jest global setup configured?`);
  return value;
}

/** Connection settings of the test run's Parse Server. */
export function testParseConfig() {
  return {
    serverURL: env(TEST_ENV.serverURL),
    appId: env(TEST_ENV.appId),
    masterKey: env(TEST_ENV.masterKey),
    javascriptKey: env(TEST_ENV.javascriptKey),
    databaseURI: env(TEST_ENV.databaseURI),
  };
}

/** The `parse` option of ParseAgentModule.forRoot for the test run's Parse Server. */
export function testParseConnection() {
  const { serverURL, appId, masterKey, javascriptKey } = testParseConfig();
  return { serverURL, appId, masterKey, javascriptKey };
}

/** A thin client for Parse's REST API, used by fixtures and by tests that check Parse itself. */
export async function parseRest<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
  auth: RestAuth = {},
): Promise<T> {
  const cfg = testParseConfig();
  const headers: Record<string, string> = {
    'X-Parse-Application-Id': cfg.appId,
    'X-Parse-JavaScript-Key': cfg.javascriptKey,
    'Content-Type': 'application/json',
  };
  if (auth.masterKey) headers['X-Parse-Master-Key'] = cfg.masterKey;
  if (auth.sessionToken) headers['X-Parse-Session-Token'] = auth.sessionToken;
  const res = await fetch(cfg.serverURL + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!res.ok) {
    throw new ParseRestError(
      res.status,
      json.code as number | undefined,
      String(json.error ?? text),
    );
  }
  return json as T;
}

/** GET /classes/<name> with a where clause. */
export async function findRows(
  className: string,
  where: Record<string, unknown> = {},
  auth: RestAuth = {},
  extra: Record<string, string> = {},
): Promise<Array<Record<string, unknown>>> {
  const params = new URLSearchParams({ where: JSON.stringify(where), ...extra });
  const out = await parseRest<{ results: Array<Record<string, unknown>> }>(
    'GET',
    `/classes/${className}?${params.toString()}`,
    undefined,
    auth,
  );
  return out.results;
}
