import type { Readable, Writable } from 'node:stream';
import { isLoopbackAddress } from '../../transport/http/transport-checks';
import { bridgeStdioToHttp } from './stdio-http-bridge';
import { PARSE_AGENT_VERSION } from '../../version';
import { BUILTIN_DATA_PATHS } from '../../composition/data-paths';
import {
  CLI_ENV,
  CliUsageError,
  databaseUrisFromFlags,
  type CliGlobalOptions,
} from '../cli-settings';

type Env = Record<string, string | undefined>;

/** `parse-agent connect` options. */
export interface ConnectOptions {
  header?: string[];
  /** --allow-insecure-http: plain http:// to a host that is not this machine. */
  allowInsecureHttp?: boolean;
  /** --allow-http, the earlier name of the same flag. */
  allowHttp?: boolean;
}

export interface ConnectRequest {
  url: string;
  options: ConnectOptions;
  globals: CliGlobalOptions;
  /** From --session-token / --session-token-file, when given. */
  sessionToken?: string;
  env: Env;
  input: Readable;
  output: Writable;
  log: (line: string) => void;
}

/** Header names whose values are credentials: on argv they draw a warning. */
const SECRET_HEADER = /authorization|api[-_]?key|token|cookie|secret/i;

/** Settings that shape a local agent; over `connect` the app decides them. */
const LOCAL_ONLY_FLAGS: Array<[keyof CliGlobalOptions, string]> = [
  ['serverUrl', '--server-url'],
  ['appId', '--app-id'],
  ['permissions', '--permissions'],
  ['tenant', '--tenant'],
  ['models', '--models'],
];

/**
 * The request headers `connect` sends: the user's session token as a Bearer token, or the
 * operator's MCP_API_KEY, plus any --header. Exactly one credential; no Parse key is involved.
 */
export function connectHeaders(
  request: Pick<ConnectRequest, 'options' | 'globals' | 'sessionToken' | 'env'>,
  warn: (line: string) => void,
): { headers: Record<string, string>; actingAs: string } {
  const extra: Record<string, string> = {};
  for (const raw of request.options.header ?? []) {
    const colon = raw.indexOf(':');
    const name = colon > 0 ? raw.slice(0, colon).trim() : '';
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      throw new CliUsageError(
        `--header must look like "Name: value" (got a header without a valid name).`,
      );
    }
    if (SECRET_HEADER.test(name)) {
      warn(
        `parse-agent: warning: --header ${name} puts a credential on the command line, where other local users can read it (ps, /proc). Prefer ${CLI_ENV.sessionToken}, --session-token-file or ${CLI_ENV.apiKey}.`,
      );
    }
    extra[name] = raw.slice(colon + 1).trim();
  }
  if (request.globals.username !== undefined) {
    throw new CliUsageError(
      `connect does not log in: it sends a session token to the app. Log in through the app (or Parse Server's /login) and put the token in ${CLI_ENV.sessionToken} or a file for --session-token-file.`,
    );
  }
  const token = request.sessionToken ?? request.env[CLI_ENV.sessionToken]?.trim();
  const apiKey = request.env[CLI_ENV.apiKey]?.trim();
  const named = new Set(Object.keys(extra).map((name) => name.toLowerCase()));
  const headerCredential = named.has('authorization') || named.has('x-mcp-api-key');
  const given = [
    token && 'a session token',
    apiKey && CLI_ENV.apiKey,
    headerCredential && '--header',
  ];
  const credentials = given.filter(Boolean);
  if (credentials.length > 1) {
    throw new CliUsageError(
      `Connect as one identity: ${credentials.join(' and ')} were all given. A user sends a session token (${CLI_ENV.sessionToken} or --session-token-file); the operator sends ${CLI_ENV.apiKey}. Unset the other (a .env file may set it).`,
    );
  }
  if (!credentials.length) {
    throw new CliUsageError(
      `connect needs a credential for the app: a user's Parse session token in ${CLI_ENV.sessionToken} (or --session-token-file <path>), or the operator's key in ${CLI_ENV.apiKey}.`,
    );
  }
  if (token) {
    return {
      headers: { ...extra, Authorization: `Bearer ${token}` },
      actingAs: 'a user (session token)',
    };
  }
  if (apiKey) {
    return {
      headers: { ...extra, 'X-MCP-API-Key': apiKey },
      actingAs: 'the operator (MCP_API_KEY)',
    };
  }
  return { headers: extra, actingAs: 'the credential in --header' };
}

/** Refuses anything but an http(s) URL, and plain http beyond this machine unless allowed. */
export function connectUrl(raw: string, allowInsecureHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliUsageError(
      `connect needs the endpoint's full URL, e.g. https://app.example.com/mcp (got "${raw}").`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CliUsageError(
      `connect speaks HTTP: the URL must start with https:// or http:// (got ${url.protocol}).`,
    );
  }
  if (url.username || url.password) {
    throw new CliUsageError(
      'Put no credentials in the URL; the token comes from the environment or a file.',
    );
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (
    url.protocol === 'http:' &&
    !allowInsecureHttp &&
    host !== 'localhost' &&
    !isLoopbackAddress(host)
  ) {
    throw new CliUsageError(
      `Refusing plain http to ${url.host}: the credential would travel unencrypted. Use https://, or pass --allow-insecure-http if this network is trusted.`,
    );
  }
  return url;
}

/** Runs the bridge until stdin ends or a signal arrives; resolves to the exit code. */
export async function connectOverStdio(request: ConnectRequest): Promise<number> {
  const { allowInsecureHttp, allowHttp } = request.options;
  const url = connectUrl(request.url, Boolean(allowInsecureHttp || allowHttp));
  const { headers, actingAs } = connectHeaders(request, request.log);
  const databaseUris = databaseUrisFromFlags(request.globals);
  const ignored = [
    ...LOCAL_ONLY_FLAGS.filter(([key]) => request.globals[key] !== undefined).map(
      ([, flag]) => flag,
    ),
    ...BUILTIN_DATA_PATHS.filter((path) => databaseUris[path.kind] !== undefined).map(
      (path) => path.uri.flag,
    ),
  ];
  for (const flag of ignored) {
    request.log(`parse-agent: warning: ${flag} has no effect with connect; the app decides it.`);
  }
  request.log(
    `parse-agent ${PARSE_AGENT_VERSION}: relaying MCP over stdio to ${url.href} as ${actingAs}`,
  );
  const bridge = bridgeStdioToHttp({
    url: url.href,
    headers: { ...headers, 'User-Agent': `parse-agent-connect/${PARSE_AGENT_VERSION}` },
    input: request.input,
    output: request.output,
    log: (line) => request.log(`[parse-agent] ${line}`),
  });
  const stop = () => void bridge.close();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await bridge.closed;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  return 0;
}
