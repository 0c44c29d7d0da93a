import { authOptionsProblems } from '../auth/auth-options';
import { DEFAULT_QUERY_COST_LIMITS } from '../core/constants';
import { BUILTIN_DATA_PATHS } from '../composition/data-paths';
import { ParseAgentConfigError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { validateRedisOptions } from '../redis/redis-connection';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';
import { resolveStartupCheck } from './startup-check';
import { agentDefaultsProblems } from '../agent/agent-defaults-check';

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
  // Each built-in database path checks its own option (postgres, mongo...).
  for (const path of BUILTIN_DATA_PATHS) {
    const option: unknown = options[path.kind];
    if (option === undefined) continue;
    const [problem] = path.validate(option);
    if (problem) fail(problem);
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
  if (
    options.slowQueryThresholdMs !== undefined &&
    !(typeof options.slowQueryThresholdMs === 'number' && options.slowQueryThresholdMs >= 0)
  ) {
    fail('slowQueryThresholdMs must be a non-negative number of milliseconds.');
  }
  if (options.defaults !== undefined) {
    if (!isPlainObject(options.defaults)) fail('defaults must be an object of agent options.');
    const [problem] = agentDefaultsProblems(options.defaults);
    if (problem) fail(problem);
  }
  resolveStartupCheck(options.startupCheck);
  return options;
}
