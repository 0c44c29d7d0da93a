import type { EmbeddingProvider } from '../ports/embedding-provider';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  BUILTIN_DATA_PATHS,
  type DatabaseSetting,
  type DataPathKind,
} from '../composition/data-paths';
import { schemesText } from '../data/data-path-descriptor';
import { isPermissionLevel, OBJECT_ID_PATTERN, type PermissionLevel } from '../core/constants';
import { ParseAgentConfigError } from '../core/errors';

type Env = Record<string, string | undefined>;

/**
 * Every environment variable the CLI reads (also listed, with comments, in `.env.sample`), besides
 * each database path's connection string (`POSTGRES_URI`, `MONGODB_URI`: see `uri.env` of the
 * descriptors in `composition/data-paths.ts`).
 */
export const CLI_ENV = {
  serverURL: 'PARSE_SERVER_URL',
  appId: 'PARSE_APP_ID',
  masterKey: 'PARSE_MASTER_KEY',
  javascriptKey: 'PARSE_JAVASCRIPT_KEY',
  sessionToken: 'PARSE_SESSION_TOKEN',
  username: 'PARSE_USERNAME',
  password: 'PARSE_PASSWORD',
  permissions: 'MCP_AGENT_PERMISSIONS',
  tenantId: 'PARSE_AGENT_TENANT_ID',
  tenantRole: 'PARSE_AGENT_TENANT_ROLE',
  models: 'PARSE_AGENT_MODELS',
  exposeUnregistered: 'PARSE_AGENT_EXPOSE_UNREGISTERED',
  quiet: 'PARSE_AGENT_QUIET',
  chatTrace: 'MCP_CHAT_TRACE',
  maxIterations: 'LLM_MAX_ITERATIONS',
  autoCompactAt: 'LLM_AUTO_COMPACT_AT',
  systemPrompt: 'LLM_SYSTEM_PROMPT',
  systemPromptSuffix: 'LLM_SYSTEM_PROMPT_SUFFIX',
  host: 'MCP_HOST',
  port: 'MCP_PORT',
  apiKey: 'MCP_API_KEY',
  logFormat: 'LOG_FORMAT',
} as const;

/** A setting the user must fix; the CLI prints its message and exits 2. */
export class CliUsageError extends ParseAgentConfigError {}

/** Options every command accepts (flags win over the environment). */
export interface CliGlobalOptions {
  envFile?: string;
  serverUrl?: string;
  appId?: string;
  sessionToken?: string;
  /** A file holding the session token; `-` is stdin (see cli-secrets). */
  sessionTokenFile?: string;
  username?: string;
  /** Act as this _User through a real session of theirs (master key only). */
  impersonate?: string;
  permissions?: string;
  tenant?: string;
  tenantRole?: string;
  models?: string;
  /** `--expose-unregistered`: classes no model declares are reachable (master key only). */
  exposeUnregistered?: boolean;
  /** `--quiet`: no banners or notes on stderr (errors and warnings still). */
  quiet?: boolean;
  /**
   * Connection strings by database kind, from each path's flag (`--postgres-uri`): see
   * `databaseUrisFromFlags`. They hold a password: argv works with a warning (see cli-secrets).
   */
  databaseUris?: DatabaseUris;
}

/** Connection strings given on the command line, by database kind. */
export type DatabaseUris = Partial<Record<DataPathKind, string>>;

/** The option name commander gives a flag: `--postgres-uri` -> `postgresUri`. */
export function flagOption(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** The connection strings among commander's parsed options, one flag per database path. */
export function databaseUrisFromFlags(options: object): DatabaseUris {
  const uris: DatabaseUris = {};
  for (const path of BUILTIN_DATA_PATHS) {
    const value = (options as Record<string, unknown>)[flagOption(path.uri.flag)];
    if (typeof value === 'string') uris[path.kind] = value;
  }
  return uris;
}

export type CliIdentity =
  | { kind: 'session'; sessionToken: string }
  | { kind: 'login'; username: string; password: string }
  | { kind: 'master' };

export interface CliSettings {
  parse: { serverURL: string; appId: string; masterKey: string; javascriptKey?: string };
  identity: CliIdentity;
  /** The _User the operator acts as (`--impersonate`): a session of theirs, never the master key. */
  impersonate?: string;
  permissions: PermissionLevel;
  tenantId?: string;
  /**
   * A role-name pattern such as `{tenant}-staff`: a user's tenant is read from their direct
   * membership in one matching role (with the master key), as the shipped auth does.
   */
  tenantRole?: string;
  /** Module to load decorated model classes from. */
  models?: string;
  /**
   * Classes no model declares: `'hidden'` (the default) or `'visible'` (`--expose-unregistered`,
   * only for the operator acting with the master key).
   */
  unregisteredClasses: 'hidden' | 'visible';
  /** `--quiet` (or PARSE_AGENT_QUIET=1): no banners or notes on stderr. */
  quiet: boolean;
  /**
   * The database Parse Server stores its data in, for the direct path (analytics, aclUser/aclRole).
   * At most one: Parse Server runs on one database.
   */
  database?: DatabaseSetting;
  env: Env;
  /** Embeddings for semantic_search and `embed` (set by the commands that need them). */
  embeddings?: EmbeddingProvider;
}

/**
 * Loads `.env` into the environment: the named file (which must exist), else `./.env` when there
 * is one. Variables already set win, as with dotenv.
 */
export function loadEnvFile(path: string | undefined, env: Env = process.env): string | undefined {
  const file = path ? resolve(path) : resolve('.env');
  if (!existsSync(file)) {
    if (path) throw new CliUsageError(`--env-file ${path}: no such file.`);
    return undefined;
  }
  const before = { ...env };
  process.loadEnvFile(file);
  // loadEnvFile overwrites; put back what the shell had set.
  for (const [key, value] of Object.entries(before)) {
    if (value !== undefined) env[key] = value;
  }
  return file;
}

function setting(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/**
 * A setting that says whom the CLI acts for (a session token, a username, a tenant): unset is
 * "none", but set and blank is refused. `PARSE_SESSION_TOKEN=` left empty by a script whose token
 * went missing would otherwise run the command as the operator with the master key.
 */
function identitySetting(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed) return trimmed;
  throw new CliUsageError(
    `${name} is set but empty. Give it a value, or remove it from the environment (comment it out in .env): an empty identity setting is refused rather than read as "act as the operator with the master key".`,
  );
}

/** Reads the connection, identity and agent settings; throws CliUsageError naming what is missing. */
export function readCliSettings(options: CliGlobalOptions, env: Env = process.env): CliSettings {
  const serverURL = setting(options.serverUrl ?? env[CLI_ENV.serverURL]);
  const appId = setting(options.appId ?? env[CLI_ENV.appId]);
  const masterKey = setting(env[CLI_ENV.masterKey]);
  const missing = [
    serverURL ? undefined : `${CLI_ENV.serverURL} (or --server-url)`,
    appId ? undefined : `${CLI_ENV.appId} (or --app-id)`,
    masterKey ? undefined : CLI_ENV.masterKey,
  ].filter(Boolean);
  if (missing.length) {
    throw new CliUsageError(
      `Set ${missing.join(', ')}: the Parse Server to talk to. Put them in the environment or a .env file (see .env.sample); the master key is needed to read schemas even when acting as a user.`,
    );
  }
  try {
    const url = new URL(serverURL!);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
  } catch {
    throw new CliUsageError(
      `${CLI_ENV.serverURL} must be an http(s) URL such as http://localhost:1337/parse, got "${serverURL}".`,
    );
  }

  const sessionToken = identitySetting(
    options.sessionToken ?? env[CLI_ENV.sessionToken],
    options.sessionToken !== undefined ? 'The session token' : CLI_ENV.sessionToken,
  );
  const username = identitySetting(
    options.username ?? env[CLI_ENV.username],
    options.username !== undefined ? '--username' : CLI_ENV.username,
  );
  const password = env[CLI_ENV.password];
  if (sessionToken && username) {
    throw new CliUsageError(
      `Act as one identity: a session token (${CLI_ENV.sessionToken} / --session-token-file) or a username (${CLI_ENV.username} / --username), not both.`,
    );
  }
  let identity: CliIdentity = { kind: 'master' };
  if (sessionToken) identity = { kind: 'session', sessionToken };
  else if (username) {
    if (!password) {
      throw new CliUsageError(
        `--username ${username} needs the password in ${CLI_ENV.password} (kept out of the command line, where other users could read it).`,
      );
    }
    identity = { kind: 'login', username, password };
  }

  const impersonate = identitySetting(options.impersonate, '--impersonate');
  if (impersonate !== undefined) {
    if (identity.kind !== 'master') {
      throw new CliUsageError(
        `--impersonate needs the master key: it is the operator acting as a user. Leave out the session token and --username (${CLI_ENV.sessionToken}, ${CLI_ENV.username}).`,
      );
    }
    if (!OBJECT_ID_PATTERN.test(impersonate)) {
      throw new CliUsageError(`--impersonate takes a _User objectId, got "${impersonate}".`);
    }
  }

  const exposeUnregistered =
    options.exposeUnregistered ?? booleanSetting(env, CLI_ENV.exposeUnregistered) ?? false;
  if (exposeUnregistered && identity.kind !== 'master') {
    throw new CliUsageError(
      `--expose-unregistered (${CLI_ENV.exposeUnregistered}) is for the operator acting with the master key; an agent acting for a user sees the classes its models declare (--models). Remove the flag, or act as the operator (no session token or username).`,
    );
  }

  const permissions = setting(options.permissions ?? env[CLI_ENV.permissions]) ?? 'readonly';
  if (!isPermissionLevel(permissions)) {
    throw new CliUsageError(
      `Permissions must be readonly, write or admin (--permissions or ${CLI_ENV.permissions}), got "${permissions}".`,
    );
  }
  return {
    parse: {
      serverURL: serverURL!,
      appId: appId!,
      masterKey: masterKey!,
      javascriptKey: setting(env[CLI_ENV.javascriptKey]),
    },
    identity,
    ...(impersonate ? { impersonate } : {}),
    permissions,
    tenantId: identitySetting(
      options.tenant ?? env[CLI_ENV.tenantId],
      options.tenant !== undefined ? '--tenant' : CLI_ENV.tenantId,
    ),
    tenantRole: identitySetting(
      options.tenantRole ?? env[CLI_ENV.tenantRole],
      options.tenantRole !== undefined ? '--tenant-role' : CLI_ENV.tenantRole,
    ),
    models: setting(options.models ?? env[CLI_ENV.models]),
    unregisteredClasses: exposeUnregistered ? 'visible' : 'hidden',
    quiet: options.quiet ?? booleanSetting(env, CLI_ENV.quiet) ?? false,
    database: readDatabaseSetting(options, env),
    env,
  };
}

/**
 * The direct database path from a path's variable or flag (POSTGRES_URI / --postgres-uri,
 * MONGODB_URI / --mongodb-uri), if one is named. The URI itself is never echoed.
 */
function readDatabaseSetting(options: CliGlobalOptions, env: Env): DatabaseSetting | undefined {
  const named = BUILTIN_DATA_PATHS.map((path) => ({
    path,
    uri: setting(options.databaseUris?.[path.kind] ?? env[path.uri.env]),
  })).filter((entry) => entry.uri !== undefined);
  if (named.length > 1) {
    const choices = BUILTIN_DATA_PATHS.map(
      (path) => `${path.uri.env} (${path.uri.flag}) when Parse Server runs on ${path.label}`,
    );
    throw new CliUsageError(
      `Set one database: ${choices.join(', or ')}, ${choices.length === 2 ? 'not both' : 'only one of them'}.`,
    );
  }
  const [given] = named;
  if (!given) return undefined;
  const { path, uri } = given;
  // Schemes are case-insensitive here, as in a URL.
  if (!path.uri.schemes.some((scheme) => uri!.toLowerCase().startsWith(`${scheme}//`))) {
    throw new CliUsageError(
      `${path.uri.env} must be a ${schemesText(path.uri.schemes)} connection string (the database Parse Server stores its data in).`,
    );
  }
  return { kind: path.kind, uri: uri! };
}

/** A positive integer from the environment, or undefined; anything else is a usage error. */
export function positiveIntegerSetting(env: Env, name: string): number | undefined {
  const raw = setting(env[name]);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    throw new CliUsageError(`${name} must be a positive integer, got "${raw}".`);
  }
  return value;
}

/** A yes/no setting: 1/true/yes or 0/false/no (any case); unset or empty is undefined. */
export function booleanSetting(env: Env, name: string): boolean | undefined {
  const raw = setting(env[name])?.toLowerCase();
  if (raw === undefined) return undefined;
  if (['1', 'true', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'no'].includes(raw)) return false;
  throw new CliUsageError(`${name} must be 1 or 0 (true or false), got "${env[name]}".`);
}
