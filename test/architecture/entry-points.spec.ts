import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as root from 'nestjs-parse-agent';
// Resolved by tsconfig paths when type-checked, by jest's moduleNameMapper when run.
import * as anthropic from 'nestjs-parse-agent/anthropic';
import * as openai from 'nestjs-parse-agent/openai';
import * as redis from 'nestjs-parse-agent/redis';
import * as llm from 'nestjs-parse-agent/llm';
import * as mcp from 'nestjs-parse-agent/mcp';
import * as data from 'nestjs-parse-agent/data';
import * as auth from 'nestjs-parse-agent/auth';
import * as stores from 'nestjs-parse-agent/stores';
import * as ops from 'nestjs-parse-agent/ops';

const LIBRARY = resolve(__dirname, '..', '..', 'libs', 'parse-agent');

interface PackageJson {
  main: string;
  types: string;
  bin: Record<string, string>;
  files: string[];
  exports: Record<string, string | { types: string; default: string }>;
  typesVersions: Record<string, Record<string, string[]>>;
}
const pkg = JSON.parse(readFileSync(join(LIBRARY, 'package.json'), 'utf8')) as PackageJson;

/** The optional integrations: subpath, and names that must be there and not in the root. */
const INTEGRATIONS: Record<string, string[]> = {
  redis: [
    'RedisConnection',
    'RedisRateLimiter',
    'RedisSessionStore',
    'RedisEventStore',
    'RedisCancellationBus',
    'RedisListChangedRelay',
  ],
  openai: ['OpenAiProvider'],
  anthropic: ['AnthropicProvider'],
};

/**
 * The subpaths that keep the root small (issue 33: the root carries what an application needs on
 * day one): one loaded module each, and a name that must be there and not in the root.
 */
const SURFACE: Record<string, { module: Record<string, unknown>; name: string }> = {
  llm: { module: llm, name: 'ParseAgentConversation' },
  mcp: { module: mcp, name: 'startStandaloneMcpServer' },
  data: { module: data, name: 'WritePolicy' },
  auth: { module: auth, name: 'aclReadSqlClause' },
  stores: { module: stores, name: 'InMemorySessionStore' },
  ops: { module: ops, name: 'suppressSecurityBanners' },
};

const SUBPATHS = [...Object.keys(INTEGRATIONS), ...Object.keys(SURFACE)];

interface ExportCounter {
  ROOT_NAME_LIMIT: number;
  exportedNames(options: { fromSource: boolean }): Record<string, string[]>;
}
// The script `node scripts/count-exports.js` runs: every name each entry point exposes, types too.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const counter = require('../../scripts/count-exports.js') as ExportCounter;

/**
 * The package's entry points, as jest (moduleNameMapper), tsconfig paths and the published
 * package.json ("exports" for Node and modern resolvers, "typesVersions" for `moduleResolution:
 * node`) each see them. The packaging e2e proves the published side; this keeps the maps in step.
 */
describe('package entry points', () => {
  it('exports the root and its subpaths, with types first', () => {
    expect(Object.keys(pkg.exports).sort()).toEqual(
      ['.', './package.json', ...SUBPATHS.map((name) => `./${name}`)].sort(),
    );
    expect(pkg.exports['.']).toEqual({ types: `./${pkg.types}`, default: `./${pkg.main}` });
    for (const name of SUBPATHS) {
      const entry = pkg.exports[`./${name}`];
      // "types" must come before "default": resolvers take the first condition that matches.
      expect(entry).toEqual({ types: `./dist/${name}.d.ts`, default: `./dist/${name}.js` });
      expect(Object.keys(entry)[0]).toBe('types');
      expect(pkg.typesVersions['*'][name]).toEqual([`dist/${name}.d.ts`]);
      expect(existsSync(join(LIBRARY, 'src', `${name}.ts`))).toBe(true);
    }
  });

  it('keeps the optional integrations out of the root and resolves their subpaths', () => {
    expect([redis.RedisSessionStore, openai.OpenAiProvider, anthropic.AnthropicProvider]).toEqual([
      expect.any(Function),
      expect.any(Function),
      expect.any(Function),
    ]);
    for (const [name, names] of Object.entries(INTEGRATIONS)) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const subpath = require(`nestjs-parse-agent/${name}`) as Record<string, unknown>;
      for (const exported of names) {
        expect({ [exported]: typeof subpath[exported] }).toEqual({ [exported]: 'function' });
        expect(Object.keys(root)).not.toContain(exported);
      }
    }
    // Any limiter may raise RateLimiterUnavailableError (the endpoint answers 503 for it), so it
    // is a root name; the redis subpath still re-exports the same class for code importing it there.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const redisPath = require('nestjs-parse-agent/redis') as Record<string, unknown>;
    expect(redisPath.RateLimiterUnavailableError).toBe(
      (root as Record<string, unknown>).RateLimiterUnavailableError,
    );
  });

  it('moves the helpers out of the root: each subpath resolves, and its names are not root names', () => {
    for (const [name, { module, name: exported }] of Object.entries(SURFACE)) {
      expect({ [name]: typeof module[exported] }).toEqual({ [name]: 'function' });
      for (const value of Object.keys(module)) expect(Object.keys(root)).not.toContain(value);
    }
  });

  it(`keeps the root at or under ${counter.ROOT_NAME_LIMIT} names, types included, each exported once`, () => {
    const names = counter.exportedNames({ fromSource: true });
    expect(Object.keys(names).sort()).toEqual(['index', ...SUBPATHS].sort());
    expect(names.index.length).toBeLessThanOrEqual(counter.ROOT_NAME_LIMIT);
    // A name lives in one entry point; the one exception is documented above.
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [entry, list] of Object.entries(names)) {
      for (const name of list) {
        const first = seen.get(name);
        if (first && !(name === 'RateLimiterUnavailableError' && entry === 'redis')) {
          twice.push(`${name}: ${first} and ${entry}`);
        }
        seen.set(name, first ?? entry);
      }
    }
    expect(twice).toEqual([]);
  }, 120_000);

  it('ships a committed bin that npm can link before the build', () => {
    const bin = pkg.bin['parse-agent'];
    expect(bin).toBe('bin/parse-agent.js');
    expect(pkg.files).toEqual(expect.arrayContaining(['bin', 'dist', '.env.sample']));
    expect(readFileSync(join(LIBRARY, bin), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});
