import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Thrown for settings a user must fix; main.ts prints its message on one line and exits 1. */
export class DemoConfigError extends Error {
  override name = 'DemoConfigError';
}

/** Settings both modes share. */
export interface CommonSettings {
  port: number;
  host: string;
  demoPassword: string;
  /** MCP_API_KEY; when unset, main.ts uses the key kept in DATA_DIR (generated once). */
  mcpApiKey?: string;
  /** Where the demo keeps its state (embedded cluster, keys, lock). DATA_DIR, default .data. */
  dataDir: string;
  /** MCP_RATE_LIMIT: tool calls per minute per caller (default 60). */
  rateLimitPerMinute: number;
  /** SHUTDOWN_GRACE_MS: how long calls in flight may finish on SIGTERM (default 10 000). */
  shutdownGraceMs: number;
  /** LOG_FORMAT: json (default when stdout is not a terminal) or pretty. */
  logFormat: 'json' | 'pretty';
}

export interface EmbeddedSettings extends CommonSettings {
  mode: 'embedded';
  appId: string;
  masterKey: string;
}

export interface ExternalSettings extends CommonSettings {
  mode: 'external';
  serverURL: string;
  appId: string;
  masterKey: string;
  javascriptKey?: string;
  mongodbURI?: string;
  /** The Parse app's PostgreSQL database, for ACL-safe analytics straight from SQL. */
  postgresURI?: string;
}

export type DemoSettings = EmbeddedSettings | ExternalSettings;

const EXTERNAL_VARS = ['PARSE_SERVER_URL', 'PARSE_APP_ID', 'PARSE_MASTER_KEY'] as const;

function positiveInteger(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new DemoConfigError(`${name} must be an integer of at least ${min}, got "${raw}".`);
  }
  return value;
}

function parsePort(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 3000;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new DemoConfigError(`PORT must be an integer between 0 and 65535, got "${raw}".`);
  }
  return port;
}

/**
 * Reads the demo's settings from the environment. With none of PARSE_SERVER_URL, PARSE_APP_ID,
 * PARSE_MASTER_KEY set, the demo runs the embedded default; with all three it serves that deployment;
 * anything in between is a configuration error.
 */
export async function loadDemoSettings(
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): Promise<DemoSettings> {
  const port = parsePort(env.PORT);
  const host = env.HOST || '127.0.0.1';
  const demoPassword = env.DEMO_PASSWORD || 'demo-password';
  const mcpApiKey = env.MCP_API_KEY || undefined;
  const dataDir = resolve(cwd, env.DATA_DIR || '.data');
  const logFormat = env.LOG_FORMAT || (process.stdout.isTTY ? 'pretty' : 'json');
  if (logFormat !== 'json' && logFormat !== 'pretty') {
    throw new DemoConfigError(`LOG_FORMAT must be "json" or "pretty", got "${logFormat}".`);
  }
  const common: CommonSettings = {
    port,
    host,
    demoPassword,
    mcpApiKey,
    dataDir,
    rateLimitPerMinute: positiveInteger('MCP_RATE_LIMIT', env.MCP_RATE_LIMIT, 60),
    shutdownGraceMs: positiveInteger('SHUTDOWN_GRACE_MS', env.SHUTDOWN_GRACE_MS, 10_000, 0),
    logFormat,
  };
  const present = EXTERNAL_VARS.filter((name) => env[name]);
  if (present.length > 0 && present.length < EXTERNAL_VARS.length) {
    const missing = EXTERNAL_VARS.filter((name) => !env[name]);
    throw new DemoConfigError(
      `${present.join(', ')} set but ${missing.join(', ')} missing: set all of ${EXTERNAL_VARS.join(', ')} to serve an existing Parse Server, or none for the embedded demo.`,
    );
  }
  if (present.length === EXTERNAL_VARS.length) {
    const serverURL = env.PARSE_SERVER_URL as string;
    let url: URL;
    try {
      url = new URL(serverURL);
    } catch {
      throw new DemoConfigError(`PARSE_SERVER_URL is not a valid URL: "${serverURL}".`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new DemoConfigError(`PARSE_SERVER_URL must use http or https, got "${url.protocol}".`);
    }
    if (env.MONGODB_URI && !/^mongodb(\+srv)?:\/\//.test(env.MONGODB_URI)) {
      throw new DemoConfigError('MONGODB_URI must start with mongodb:// or mongodb+srv://.');
    }
    if (env.POSTGRES_URI && !/^postgres(ql)?:\/\//.test(env.POSTGRES_URI)) {
      throw new DemoConfigError('POSTGRES_URI must start with postgres:// or postgresql://.');
    }
    return {
      ...common,
      mode: 'external',
      serverURL: serverURL.replace(/\/+$/, ''),
      appId: env.PARSE_APP_ID as string,
      masterKey: env.PARSE_MASTER_KEY as string,
      javascriptKey: env.PARSE_JAVASCRIPT_KEY || undefined,
      mongodbURI: env.MONGODB_URI || undefined,
      postgresURI: env.POSTGRES_URI || undefined,
    };
  }
  if (env.MONGODB_URI) {
    throw new DemoConfigError(
      'MONGODB_URI needs PARSE_SERVER_URL, PARSE_APP_ID and PARSE_MASTER_KEY: the embedded demo runs on PostgreSQL.',
    );
  }
  const secrets = await loadOrCreateSecrets(dataDir);
  return { ...common, mode: 'embedded', ...secrets };
}

interface EmbeddedSecrets {
  appId: string;
  masterKey: string;
}

/** The embedded Parse Server's keys: generated once, then kept in DATA_DIR so restarts reuse them. */
async function loadOrCreateSecrets(dataDir: string): Promise<EmbeddedSecrets> {
  const file = join(dataDir, 'demo-secrets.json');
  try {
    const saved = JSON.parse(await readFile(file, 'utf8')) as Partial<EmbeddedSecrets>;
    if (saved.appId && saved.masterKey) {
      return saved as EmbeddedSecrets;
    }
  } catch {
    // first start (or unreadable file): create below
  }
  const secrets: EmbeddedSecrets = {
    appId: 'parse-agent-demo',
    masterKey: randomBytes(24).toString('hex'),
  };
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, JSON.stringify(secrets, null, 2) + '\n', { mode: 0o600 });
  await chmod(file, 0o600).catch(() => undefined);
  return secrets;
}

/**
 * The operator's MCP key when MCP_API_KEY is unset: generated once and kept in DATA_DIR, so a
 * restart does not break every client configured with it.
 */
export async function loadOrCreateOperatorKey(dataDir: string): Promise<string> {
  const file = join(dataDir, 'mcp-api-key');
  const saved = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (saved.length >= 16) return saved;
  const key = randomBytes(18).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  await chmod(file, 0o600).catch(() => undefined);
  return key;
}
