import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { defineClass, createObject } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

const APP_SOURCE = `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ParseAgentModule, ParseClass, AgentDescription, type AgentOptions } from 'nestjs-parse-agent';

@ParseClass('PackItem')
@AgentDescription('Items created by the packaging test.')
class PackItem {}

const agentFactory = (): AgentOptions => ({ permissions: 'readonly' });

@Module({
  imports: [
    ParseAgentModule.forRoot({
      parse: {
        serverURL: process.env.PARSE_SERVER_URL as string,
        appId: process.env.PARSE_APP_ID as string,
        masterKey: process.env.PARSE_MASTER_KEY as string,
        javascriptKey: process.env.PARSE_JAVASCRIPT_KEY,
      },
      models: [PackItem],
      suppressSecurityBanners: true,
      agentFactory,
      mcp: { path: '/mcp' },
    }),
  ],
})
class AppModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address() as { port: number };
  process.stdout.write(JSON.stringify({ port: address.port }) + '\\n');
}
void main();
`;

/** The optional peer dependencies: none is installed in the fresh apps. */
const OPTIONAL_PEERS = [
  'ioredis',
  'openai',
  '@anthropic-ai/sdk',
  'pg',
  'mongodb',
  'class-validator',
  'class-transformer',
  'class-validator-jsonschema',
];

/** Each subpath and the optional peer its types need. */
const SUBPATH_PEERS: Record<string, string> = {
  redis: 'ioredis',
  openai: 'openai',
  anthropic: '@anthropic-ai/sdk',
};

/** The subpaths that only keep the root small: their types need no optional peer at all. */
const PEER_FREE_SUBPATHS = ['llm', 'mcp', 'data', 'auth', 'stores', 'ops'];

/** A hand-made tsconfig: strict, library declarations checked too, no esModuleInterop. */
function tsconfig(compilerOptions: Record<string, unknown>, include: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'commonjs',
      strict: true,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      skipLibCheck: false,
      outDir: 'dist',
      rootDir: 'src',
      types: ['node'],
      ...compilerOptions,
    },
    include,
  });
}

/** Runs tsc in the app; the diagnostics when it fails. */
async function compile(app: string, project: string): Promise<string> {
  try {
    await run(process.execPath, [TSC, '-p', project], { cwd: app });
    return '';
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

/** The docs' install command: the line of the Install section that packs the library. */
const RECIPE = 'npm ci && npm pack -w nestjs-parse-agent';
function documentedRecipe(): string {
  const docs = readFileSync(join(ROOT, 'docs', 'mount-in-your-app.md'), 'utf8');
  const line = docs.split('\n').find((l) => l.startsWith('npm ci'));
  // The test runs what the page says; the page must say this (one place to change both).
  expect(line?.replace(/\s+#.*$/, '')).toBe(RECIPE);
  return RECIPE;
}

/**
 * The library as a user gets it: a fresh clone of this repository (its committed HEAD), the
 * documented recipe run in it (npm ci, then npm pack of the workspace, whose prepack builds it),
 * the tarball installed into a fresh Nest app outside this workspace (dependencies from the npm registry) on each supported
 * Nest major, with none of the optional peers; compiled with strict TypeScript and skipLibCheck
 * off, then serving one MCP call against the test Parse Server.
 */
describe('packaging: npm pack, install into a fresh Nest app, compile strictly, serve MCP', () => {
  let dir: string;
  let tarball: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parse-agent-pack-'));
    // The committed tree (HEAD), as a user's clone has it: no dist/, no node_modules.
    const clone = join(dir, 'clone');
    await run('git', ['clone', '--quiet', '--depth', '1', `file://${ROOT}`, clone]);
    // A node_modules committed by mistake (a worktree's symlink to a shared one) would have npm ci
    // empty the directory it points to: never run the recipe on such a tree.
    await expect(lstat(join(clone, 'node_modules'))).rejects.toThrow(/ENOENT/);
    // Exactly the documented recipe, run by a shell at the clone's root. The npm cache may serve
    // the packages (prefer-offline), which changes where they come from, not what is installed.
    await run('sh', ['-c', documentedRecipe()], {
      cwd: clone,
      env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_audit: 'false' },
      maxBuffer: 64 * 1024 * 1024,
    });
    const [file] = (await readdir(clone)).filter((f) => f.endsWith('.tgz'));
    tarball = join(clone, file);
    await defineClass('PackItem', { label: { type: 'String' } });
    await createObject('PackItem', { label: 'packed' });
  }, 600_000);
  afterAll(async () => {
    // The apps' node_modules are large: on a busy machine removing them outlasts jest's 30 s.
    await rm(dir, { recursive: true, force: true });
  }, 300_000);

  it('packs the build, the bin launcher, .env.sample, the console page and one entry per subpath', async () => {
    const listing = (await run('tar', ['-tzf', tarball])).stdout.split('\n');
    expect(listing).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/LICENSE',
        'package/.env.sample',
        'package/bin/parse-agent.js',
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/dist/cli.main.js',
        // The console's page ships as it is (ParseAgentConsoleModule reads it at startup).
        'package/console/index.html',
        'package/console/console.js',
        'package/console/console-live.js',
        ...[...Object.keys(SUBPATH_PEERS), ...PEER_FREE_SUBPATHS].flatMap((name) => [
          `package/dist/${name}.js`,
          `package/dist/${name}.d.ts`,
        ]),
      ]),
    );
    // No source maps pointing at sources the package does not carry, and no tests.
    expect(listing.filter((f) => f.endsWith('.map') || f.includes('.spec.'))).toEqual([]);
  });

  describe.each([11, 12])('into a Nest %i app', (nestMajor) => {
    let app: string;
    let server: ChildProcess | undefined;

    beforeAll(async () => {
      app = join(dir, `app-nest${nestMajor}`);
      await mkdir(join(app, 'src'), { recursive: true });
      await writeFile(
        join(app, 'package.json'),
        JSON.stringify({
          name: `pack-test-app-nest${nestMajor}`,
          private: true,
          dependencies: {
            '@nestjs/common': `^${nestMajor}.0.0`,
            '@nestjs/core': `^${nestMajor}.0.0`,
            '@nestjs/platform-express': `^${nestMajor}.0.0`,
            'reflect-metadata': '^0.2.0',
            rxjs: '^7.8.0',
            'nestjs-parse-agent': `file:${tarball}`,
          },
          devDependencies: { '@types/node': '^20.0.0' },
        }),
      );
      await writeFile(join(app, 'src', 'main.ts'), APP_SOURCE);
      // npm refuses the install (ERESOLVE) when the peer ranges leave this Nest major out.
      await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
        cwd: app,
        maxBuffer: 16 * 1024 * 1024,
      });
    }, 240_000);
    afterAll(() => {
      server?.kill('SIGKILL');
    });

    it('installs without any optional peer dependency', async () => {
      const nest = (
        await run(process.execPath, ['-p', "require('@nestjs/core/package.json').version"], {
          cwd: app,
        })
      ).stdout.trim();
      expect(nest.split('.')[0]).toBe(String(nestMajor));
      const present = OPTIONAL_PEERS.filter((name) => existsSync(join(app, 'node_modules', name)));
      expect(present).toEqual([]);
    });

    it('compiles with skipLibCheck off, for moduleResolution node and nodenext', async () => {
      await writeFile(join(app, 'tsconfig.json'), tsconfig({}, ['src/main.ts']));
      expect(await compile(app, 'tsconfig.json')).toBe('');
      // Modern resolvers read package.json "exports" (types condition) instead of main/types.
      await writeFile(
        join(app, 'tsconfig.nodenext.json'),
        tsconfig({ module: 'nodenext', moduleResolution: 'nodenext', noEmit: true }, [
          'src/main.ts',
        ]),
      );
      expect(await compile(app, 'tsconfig.nodenext.json')).toBe('');
    }, 180_000);

    it('resolves each subpath, whose types need only their own optional peer', async () => {
      const imports = Object.keys(SUBPATH_PEERS)
        .map((name) => `export * as ${name} from 'nestjs-parse-agent/${name}';`)
        .join('\n');
      await writeFile(join(app, 'src', 'subpaths.ts'), imports + '\n');
      await writeFile(
        join(app, 'tsconfig.subpaths.json'),
        tsconfig({ noEmit: true }, ['src/subpaths.ts']),
      );
      const diagnostics = await compile(app, 'tsconfig.subpaths.json');
      // The subpath itself resolves; what is missing is the peer its declarations import.
      expect(diagnostics).not.toContain("'nestjs-parse-agent/");
      for (const peer of Object.values(SUBPATH_PEERS)) {
        expect(diagnostics).toContain(`Cannot find module '${peer}'`);
      }
      // At run time the subpaths load without their peer (it is required only when used).
      const loaded = await run(
        process.execPath,
        [
          '-p',
          "Object.keys(require('nestjs-parse-agent/redis')).includes('RedisRateLimiter') && typeof require('nestjs-parse-agent/openai').OpenAiProvider",
        ],
        { cwd: app },
      );
      expect(loaded.stdout.trim()).toBe('function');
    }, 120_000);

    it('compiles the subpaths that split the root with skipLibCheck off and no optional peer', async () => {
      const imports = PEER_FREE_SUBPATHS.map(
        (name) => `export * as ${name} from 'nestjs-parse-agent/${name}';`,
      ).join('\n');
      await writeFile(join(app, 'src', 'surface.ts'), imports + '\n');
      await writeFile(
        join(app, 'tsconfig.surface.json'),
        tsconfig({ noEmit: true }, ['src/surface.ts']),
      );
      expect(await compile(app, 'tsconfig.surface.json')).toBe('');
      await writeFile(
        join(app, 'tsconfig.surface-nodenext.json'),
        tsconfig({ module: 'nodenext', moduleResolution: 'nodenext', noEmit: true }, [
          'src/surface.ts',
        ]),
      );
      expect(await compile(app, 'tsconfig.surface-nodenext.json')).toBe('');
      const loaded = await run(
        process.execPath,
        [
          '-p',
          PEER_FREE_SUBPATHS.map(
            (name) => `Object.keys(require('nestjs-parse-agent/${name}')).length > 0`,
          ).join(' && '),
        ],
        { cwd: app },
      );
      expect(loaded.stdout.trim()).toBe('true');
    }, 120_000);

    it('links the parse-agent command, whose help names a file the package ships', async () => {
      const help = await run(join(app, 'node_modules', '.bin', 'parse-agent'), ['--help'], {
        cwd: app,
      });
      expect(help.stdout).toContain('.env.sample');
      expect(existsSync(join(app, 'node_modules', 'nestjs-parse-agent', '.env.sample'))).toBe(true);
    });

    it('answers tools/call', async () => {
      const parse = testParseConnection();
      server = spawn(process.execPath, ['dist/main.js'], {
        cwd: app,
        env: {
          ...process.env,
          PARSE_SERVER_URL: parse.serverURL,
          PARSE_APP_ID: parse.appId,
          PARSE_MASTER_KEY: parse.masterKey,
          PARSE_JAVASCRIPT_KEY: parse.javascriptKey,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const port = await new Promise<number>((done, fail) => {
        let text = '';
        server!.stdout!.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          const line = text.split('\n').find((l) => l.startsWith('{"port"'));
          if (line) done((JSON.parse(line) as { port: number }).port);
        });
        server!.once('exit', (code) => fail(new Error(`the packed app exited with ${code}`)));
      });
      const res = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'count_objects', arguments: { class_name: 'PackItem' } },
        }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        result: { isError: boolean; content: Array<{ text: string }> };
      };
      expect(body.result.isError).toBe(false);
      // Text results are wrapped as untrusted data by default; the JSON sits inside the delimiters.
      expect(JSON.parse(unwrapUntrusted(body.result.content[0].text)).count).toBeGreaterThanOrEqual(
        1,
      );
    }, 60_000);
  });
});
