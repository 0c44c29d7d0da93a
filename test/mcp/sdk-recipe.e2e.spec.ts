import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import express from 'express';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { AppModule } from '../../src/example/app.module';
import { requestContextMiddleware } from '../../src/example/audit/request-context';
import { CLI_ENTRY, DEMO_MODELS, TS_REGISTER } from '../cli/cli-process';
import { demoTestSettings, seedDemo } from '../harness/demo-data';
import { testParseConfig } from '../harness/parse-rest';

const ROOT = resolve(__dirname, '../..');
const DOC = join(ROOT, 'docs/mcp-endpoint.md');

/** The TypeScript block that follows `<!-- recipe:<name> ... -->` in the doc, verbatim. */
function recipe(name: string): string {
  const doc = readFileSync(DOC, 'utf8');
  const marker = doc.indexOf(`<!-- recipe:${name} `);
  if (marker < 0) throw new Error(`docs/mcp-endpoint.md has no <!-- recipe:${name} --> block`);
  const block = /```ts\n([\s\S]*?)```/.exec(doc.slice(marker));
  if (!block) throw new Error(`no \`\`\`ts block after <!-- recipe:${name} -->`);
  return block[1];
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The client recipes of docs/mcp-endpoint.md, copied out of the doc and run as a user would: as ES
 * modules in their own Node process, against the demo app's endpoint (HTTP) and the `parse-agent`
 * CLI (stdio), on the real Parse Server. They are type-checked first, so an SDK change that breaks
 * the doc's code fails here, not in a reader's editor.
 */
describe('docs/mcp-endpoint.md: the official SDK client recipes run as written', () => {
  let app: INestApplication;
  let url: string;
  let tokens: { alice: string };
  // Inside the repository, so the recipes resolve @modelcontextprotocol/sdk from its node_modules.
  const cacheDir = join(ROOT, 'node_modules/.cache');
  let work: string;
  const scripts: Record<string, string> = {};

  beforeAll(async () => {
    mkdirSync(cacheDir, { recursive: true });
    work = mkdtempSync(join(cacheDir, 'parse-agent-doc-recipes-'));
    for (const name of ['sdk-http', 'sdk-stdio']) {
      const source = recipe(name);
      writeFileSync(join(work, `${name}.mts`), source);
      const js = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      scripts[name] = join(work, `${name}.mjs`);
      writeFileSync(scripts[name], js);
    }

    tokens = await seedDemo();
    const cfg = testParseConfig();
    const module = await Test.createTestingModule({
      imports: [
        AppModule.forRoot({
          settings: demoTestSettings(),
          parseServerURL: cfg.serverURL,
          mcpApiKey: 'recipe-test-operator-key',
          postgresURI: cfg.databaseURI,
        }),
      ],
    }).compile();
    const server = express();
    server.use(requestContextMiddleware);
    app = module.createNestApplication(new ExpressAdapter(server), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function runRecipe(name: string, env: Record<string, string>, cwd = work): Promise<Run> {
    return new Promise((done) => {
      execFile(
        process.execPath,
        [scripts[name]],
        { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmpdir(), ...env }, cwd },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          done({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
    });
  }

  it('both recipes type-check against the installed SDK (strict, NodeNext)', () => {
    const program = ts.createProgram(
      ['sdk-http', 'sdk-stdio'].map((name) => join(work, `${name}.mts`)),
      {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
      },
    );
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
  }, 60_000);

  it('HTTP: lists alice’s tools and counts her tenant’s orders from structuredContent', async () => {
    const run = await runRecipe('sdk-http', { MCP_URL: url, PARSE_SESSION_TOKEN: tokens.alice });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const [toolLine, resultLine] = run.stdout.trim().split('\n');
    const tools = toolLine.split(' ');
    expect(tools).toEqual(expect.arrayContaining(['query_class', 'count_objects', 'list_tools']));
    // A readonly session agent: no write tools are offered.
    expect(tools).not.toContain('create_object');
    // Her tenant (acme) only, as the doc says; the operator would count 2,940.
    expect(JSON.parse(resultLine)).toMatchObject({ class_name: 'Order', count: 1470 });
  });

  it('HTTP: a bad token fails the recipe at connect (401), printing nothing', async () => {
    const run = await runRecipe('sdk-http', { MCP_URL: url, PARSE_SESSION_TOKEN: 'r:not-a-token' });
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/401|Unauthorized/);
  });

  it('stdio: `npx parse-agent stdio` with settings from .env counts alice’s orders', async () => {
    // The app folder the doc tells the reader to run from: its .env holds the CLI's settings.
    const appDir = mkdtempSync(join(tmpdir(), 'parse-agent-recipe-app-'));
    const cfg = testParseConfig();
    writeFileSync(
      join(appDir, '.env'),
      [
        `PARSE_SERVER_URL=${cfg.serverURL}`,
        `PARSE_APP_ID=${cfg.appId}`,
        `PARSE_MASTER_KEY=${cfg.masterKey}`,
        `PARSE_JAVASCRIPT_KEY=${cfg.javascriptKey}`,
        `PARSE_AGENT_MODELS=${DEMO_MODELS}`,
        `PARSE_SESSION_TOKEN=${tokens.alice}`,
        'PARSE_AGENT_TENANT_ID=acme',
      ].join('\n'),
    );
    // Stands in for `npx parse-agent`, which resolves the package's bin: here, the CLI's sources.
    const bin = mkdtempSync(join(tmpdir(), 'parse-agent-recipe-bin-'));
    writeFileSync(
      join(bin, 'npx'),
      [
        '#!/bin/sh',
        '[ "$1" = parse-agent ] || { echo "unexpected: npx $*" >&2; exit 127; }',
        'shift',
        `exec "${process.execPath}" -r "${TS_REGISTER}" "${CLI_ENTRY}" "$@"`,
      ].join('\n'),
    );
    chmodSync(join(bin, 'npx'), 0o755);
    try {
      const run = await runRecipe(
        'sdk-stdio',
        { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` },
        appDir,
      );
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout.trim())).toMatchObject({ class_name: 'Order', count: 1470 });
      // The CLI's log went to stderr (inherited), never into the protocol stream.
      expect(run.stderr).toMatch(/MCP over stdio as alice/);
    } finally {
      rmSync(appDir, { recursive: true, force: true });
      rmSync(bin, { recursive: true, force: true });
    }
  }, 60_000);
});
