import type { DataPathDescriptor } from '../data-path-descriptor';
import { hasScheme, schemesText } from '../data-path-descriptor';
import { isPlainObject } from '../../core/plain-object';
import { PostgresDataAccess, type PostgresDataPathOptions } from './postgres-data-access';
import { probePostgres } from './postgres-probe';
import { PostgresDataPathProvider } from './postgres-provider';

const SCHEMES = ['postgres:', 'postgresql:'] as const;

/** Settings that take a number of milliseconds, connections or rows (never negative). */
const NUMBERS = [
  'maxConnections',
  'schemaCacheTtlMs',
  'sessionCacheTtlMs',
  'roleCacheTtlMs',
  'sessionLookupTimeoutMs',
  'statementTimeoutMs',
  'collscanMinRows',
] as const;

/** The direct PostgreSQL path (Parse-on-PostgreSQL), described once for every host. */
export const postgresDataPath: DataPathDescriptor<'postgres', PostgresDataPathOptions> = {
  kind: 'postgres',
  label: 'PostgreSQL',
  parseDatabase: 'postgres',
  uri: { env: 'POSTGRES_URI', flag: '--postgres-uri', schemes: SCHEMES },
  handleKey: 'pool',
  fromUri: (uri) => ({ uri }),
  validate(option) {
    if (!isPlainObject(option) || (!option.uri && !option.pool)) {
      return [
        'postgres needs a uri (postgres://user:pass@host:5432/db) or a pool (an existing pg.Pool).',
      ];
    }
    const problems: string[] = [];
    if (option.uri !== undefined && option.pool !== undefined) {
      problems.push('postgres takes a uri or a pool, not both.');
    }
    if (
      option.uri !== undefined &&
      (typeof option.uri !== 'string' || !hasScheme(option.uri, SCHEMES))
    ) {
      problems.push(`postgres.uri must start with ${schemesText(SCHEMES)}.`);
    }
    const pool = option.pool as { connect?: unknown; query?: unknown } | undefined;
    if (
      pool !== undefined &&
      (typeof pool?.connect !== 'function' || typeof pool?.query !== 'function')
    ) {
      problems.push('postgres.pool must be a pg.Pool (with connect() and query()).');
    }
    for (const key of NUMBERS) {
      const value = option[key];
      if (value !== undefined && !(typeof value === 'number' && value >= 0)) {
        problems.push(`postgres.${key} must be a non-negative number.`);
      }
    }
    return problems;
  },
  open(option, parts) {
    // The pg driver is loaded here; the pool connects on the first query.
    const access = new PostgresDataAccess(option, parts.parse, parts.warn);
    return {
      kind: 'postgres',
      provider: new PostgresDataPathProvider(access),
      probe: (timeoutMs) => probePostgres(access.pool, option.uri, timeoutMs),
      close: () => access.close(),
      embeddingStore: access.embeddings,
    };
  },
};
