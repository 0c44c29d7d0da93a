import { authOptionsProblems } from '../auth/auth-options';
import { DEFAULT_QUERY_COST_LIMITS } from '../core/constants';
import { ParseAgentConfigError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { validateRedisOptions } from '../redis/redis-connection';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';
import { resolveStartupCheck } from './startup-check';

/** Fails the boot with one message naming the setting to fix. */
export function validateModuleOptions(
  options: ParseAgentModuleOptions | undefined,
): ParseAgentModuleOptions {
  const fail = (problem: string): never => {
    throw new ParseAgentConfigError(`ParseAgentModule.forRoot: ${problem}`);
  };
  if (!isPlainObject(options))
    return fail('options are required, e.g. forRoot({ parse: { serverURL, appId, masterKey } }).');
  const parse = options.parse;
  if (!isPlainObject(parse)) return fail('`parse` is required: { serverURL, appId, masterKey }.');
  for (const key of ['serverURL', 'appId', 'masterKey'] as const) {
    if (typeof parse[key] !== 'string' || !parse[key])
      fail(`parse.${key} is required (a non-empty string).`);
  }
  let url: URL | undefined;
  try {
    url = new URL(parse.serverURL);
  } catch {
    fail(
      `parse.serverURL "${parse.serverURL}" is not a valid URL (e.g. http://localhost:1337/parse).`,
    );
  }
  if (url && url.protocol !== 'http:' && url.protocol !== 'https:')
    fail('parse.serverURL must use http or https.');
  if (parse.database !== undefined && parse.database !== 'mongo' && parse.database !== 'postgres')
    fail(`parse.database must be 'mongo' or 'postgres' (got ${JSON.stringify(parse.database)}).`);
  const mongo = options.mongo;
  if (mongo !== undefined) {
    if (!isPlainObject(mongo) || (!mongo.uri && !mongo.client))
      fail('mongo needs a uri or a client.');
    if (typeof mongo.uri === 'string' && !/^mongodb(\+srv)?:\/\//.test(mongo.uri)) {
      fail('mongo.uri must start with mongodb:// or mongodb+srv://.');
    }
  }
  const postgres = options.postgres;
  if (postgres !== undefined) {
    if (!isPlainObject(postgres) || (!postgres.uri && !postgres.pool)) {
      fail(
        'postgres needs a uri (postgres://user:pass@host:5432/db) or a pool (an existing pg.Pool).',
      );
    }
    if (postgres.uri !== undefined && postgres.pool !== undefined) {
      fail('postgres takes a uri or a pool, not both.');
    }
    if (
      postgres.uri !== undefined &&
      (typeof postgres.uri !== 'string' || !/^postgres(ql)?:\/\//.test(postgres.uri))
    ) {
      fail('postgres.uri must start with postgres:// or postgresql://.');
    }
    if (
      postgres.pool !== undefined &&
      (typeof (postgres.pool as { connect?: unknown })?.connect !== 'function' ||
        typeof (postgres.pool as { query?: unknown })?.query !== 'function')
    ) {
      fail('postgres.pool must be a pg.Pool (with connect() and query()).');
    }
    for (const key of [
      'maxConnections',
      'schemaCacheTtlMs',
      'sessionCacheTtlMs',
      'roleCacheTtlMs',
      'sessionLookupTimeoutMs',
      'statementTimeoutMs',
      'collscanMinRows',
    ] as const) {
      const value = postgres[key];
      if (value !== undefined && !(typeof value === 'number' && value >= 0)) {
        fail(`postgres.${key} must be a non-negative number.`);
      }
    }
  }
  if (options.redis !== undefined) validateRedisOptions(options.redis);
  if (
    options.models !== undefined &&
    (!Array.isArray(options.models) || options.models.some((m) => typeof m !== 'function'))
  ) {
    fail('models must be an array of decorated model classes.');
  }
  if (
    options.rateLimiter !== undefined &&
    typeof (options.rateLimiter as { check?: unknown })?.check !== 'function'
  ) {
    fail('rateLimiter must have a check(key) method.');
  }
  if (
    options.unregisteredClasses !== undefined &&
    options.unregisteredClasses !== 'hidden' &&
    options.unregisteredClasses !== 'visible'
  ) {
    fail(
      `unregisteredClasses must be 'hidden' (the default) or 'visible', got ${JSON.stringify(options.unregisteredClasses)}.`,
    );
  }
  if (options.wrapUntrustedData !== undefined && typeof options.wrapUntrustedData !== 'boolean')
    fail('wrapUntrustedData must be true or false.');
  if (options.queryLimits !== undefined) {
    if (!isPlainObject(options.queryLimits)) fail('queryLimits must be an object of numbers.');
    for (const [key, value] of Object.entries(options.queryLimits)) {
      if (!(key in DEFAULT_QUERY_COST_LIMITS))
        fail(
          `queryLimits.${key} is not a limit; use ${Object.keys(DEFAULT_QUERY_COST_LIMITS).join(', ')}.`,
        );
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
        fail(`queryLimits.${key} must be a non-negative integer.`);
    }
  }
  if (options.auth !== undefined) {
    const [problem] = authOptionsProblems(options.auth);
    if (problem) fail(problem);
  }
  if (options.schemaCacheTtlMs !== undefined && !(options.schemaCacheTtlMs >= 0)) {
    fail('schemaCacheTtlMs must be a non-negative number of milliseconds.');
  }
  resolveStartupCheck(options.startupCheck);
  return options;
}
