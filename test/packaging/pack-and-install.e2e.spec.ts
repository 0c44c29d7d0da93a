import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { defineClass, createObject } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';
import { unwrapUntrusted } from 'nestjs-parse-agent';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..', '..');
const LIBRARY = join(ROOT, 'libs', 'parse-agent');
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

/**
 * The library as a user gets it: packed (prepack builds it), installed from the tarball into a
 * fresh Nest app outside this workspace (dependencies from the npm registry), compiled with strict
 * TypeScript, then serving one MCP call against the test Parse Server.
 */
describe('packaging: npm pack, install into a fresh Nest app, compile strictly, serve MCP', () => {
  let dir: string;
  let server: ChildProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parse-agent-pack-'));
  });
  afterAll(async () => {
    server?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('installs, compiles and answers tools/call', async () => {
    const packed = join(dir, 'pack');
    await mkdir(packed);
    await run('npm', ['pack', '--pack-destination', packed], { cwd: LIBRARY });
    const [tarball] = (await readdir(packed)).filter((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const listing = (await run('tar', ['-tzf', join(packed, tarball)])).stdout.split('\n');
    expect(listing).toEqual(
      expect.arrayContaining([
        'package/package.json',
        'package/README.md',
        'package/LICENSE',
        'package/dist/index.js',
        'package/dist/index.d.ts',
      ]),
    );
    // No source maps pointing at sources the package does not carry, and no tests.
    expect(listing.filter((f) => f.endsWith('.map') || f.includes('.spec.'))).toEqual([]);

    const app = join(dir, 'app');
    await mkdir(join(app, 'src'), { recursive: true });
    await writeFile(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'pack-test-app',
        private: true,
        dependencies: {
          '@nestjs/common': '^11.0.0',
          '@nestjs/core': '^11.0.0',
          '@nestjs/platform-express': '^11.0.0',
          'reflect-metadata': '^0.2.0',
          rxjs: '^7.8.0',
          'nestjs-parse-agent': `file:${join(packed, tarball)}`,
        },
        devDependencies: { '@types/node': '^20.0.0' },
      }),
    );
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'commonjs',
          strict: true,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          skipLibCheck: true,
          outDir: 'dist',
          rootDir: 'src',
          types: ['node'],
        },
        include: ['src'],
      }),
    );
    await writeFile(join(app, 'src', 'main.ts'), APP_SOURCE);
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: app,
      maxBuffer: 16 * 1024 * 1024,
    });
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app });

    await defineClass('PackItem', { label: { type: 'String' } });
    await createObject('PackItem', { label: 'packed' });
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
  }, 300_000);
});
