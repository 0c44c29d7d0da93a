import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

/** Thrown for settings a user must fix; main.ts prints its message on one line and exits 1. */
export class DemoConfigError extends Error {
  override name = 'DemoConfigError';
}

export interface EmbeddedSettings {
  mode: 'embedded';
  port: number;
  host: string;
  dataDir: string;
  appId: string;
  masterKey: string;
  demoPassword: string;
  mcpApiKey?: string;
}

export interface ExternalSettings {
  mode: 'external';
  port: number;
  host: string;
  serverURL: string;
  appId: string;
  masterKey: string;
  javascriptKey?: string;
  mongodbURI?: string;
  /** The Parse app's PostgreSQL database, for ACL-safe analytics straight from SQL. */
  postgresURI?: string;
  demoPassword: string;
  mcpApiKey?: string;
}

export type DemoSettings = EmbeddedSettings | ExternalSettings;

const EXTERNAL_VARS = ['PARSE_SERVER_URL', 'PARSE_APP_ID', 'PARSE_MASTER_KEY'] as const;

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
      mode: 'external',
      port,
      host,
      serverURL: serverURL.replace(/\/+$/, ''),
      appId: env.PARSE_APP_ID as string,
      masterKey: env.PARSE_MASTER_KEY as string,
      javascriptKey: env.PARSE_JAVASCRIPT_KEY || undefined,
      mongodbURI: env.MONGODB_URI || undefined,
      postgresURI: env.POSTGRES_URI || undefined,
      demoPassword,
      mcpApiKey,
    };
  }
  if (env.MONGODB_URI) {
    throw new DemoConfigError(
      'MONGODB_URI needs PARSE_SERVER_URL, PARSE_APP_ID and PARSE_MASTER_KEY: the embedded demo runs on PostgreSQL.',
    );
  }
  const dataDir = resolve(cwd, env.DATA_DIR || '.data');
  const secrets = await loadOrCreateSecrets(dataDir);
  return { mode: 'embedded', port, host, dataDir, demoPassword, mcpApiKey, ...secrets };
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
