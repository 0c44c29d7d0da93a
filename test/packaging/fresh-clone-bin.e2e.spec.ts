import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createObject, defineClass } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';

const ROOT = resolve(__dirname, '..', '..');
const LIBRARY = join(ROOT, 'libs', 'parse-agent');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[], cwd: string, env = process.env): Promise<Run> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { cwd, env, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/**
 * docs/cli.md: in this repository `npm ci`, `npm run build`, then `npx parse-agent`. npm links a
 * workspace's bin only if its target exists at install time, and dist/ does not exist before the
 * build, so the bin must be a committed file. A copy of the workspace as a fresh clone has it (the
 * root workspace manifest and the library's package.json and bin/, no dist/), installed from the
 * registry; cloning and installing the whole repository would take minutes.
 */
describe('fresh clone: install links parse-agent before the build, npx runs it after', () => {
  let clone: string;
  const className = 'FreshCloneItem';

  beforeAll(async () => {
    clone = await mkdtemp(join(tmpdir(), 'parse-agent-clone-'));
    const library = join(clone, 'libs', 'parse-agent');
    await mkdir(library, { recursive: true });
    await writeFile(
      join(clone, 'package.json'),
      JSON.stringify({ name: 'fresh-clone', private: true, workspaces: ['libs/parse-agent'] }),
    );
    for (const entry of ['package.json', 'bin', 'README.md', 'LICENSE']) {
      await cp(join(LIBRARY, entry), join(library, entry), { recursive: true });
    }
    // A user's compiled models module, loaded with --models (unmodelled classes stay hidden).
    await writeFile(
      join(clone, 'models.js'),
      [
        "const { ParseClass } = require('nestjs-parse-agent');",
        `class ${className} {}`,
        `ParseClass('${className}')(${className});`,
        `module.exports = { ${className} };`,
      ].join('\n'),
    );
    await defineClass(className, { label: { type: 'String' } });
    await createObject(className, { label: 'cloned' });
  });
  afterAll(async () => {
    await rm(clone, { recursive: true, force: true });
  });

  it('links the command at install, says to build first, then answers a call', async () => {
    const install = await exec('npm', ['install', '--no-audit', '--no-fund'], clone);
    expect(install).toMatchObject({ code: 0 });
    const link = join(clone, 'node_modules', '.bin', 'parse-agent');
    expect(await realpath(link)).toBe(
      await realpath(join(clone, 'libs', 'parse-agent', 'bin', 'parse-agent.js')),
    );

    // The documented command. npm_config_yes=false: npx must find the workspace's command and
    // never install a package of that name from the registry.
    const noInstall = { ...process.env, npm_config_yes: 'false' };
    const beforeBuild = await exec('npx', ['parse-agent', '--help'], clone, noInstall);
    expect(beforeBuild).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('run `npm run build` first'),
    });

    // What `npm run build` does for the library (build:lib), into the clone.
    const outDir = join(clone, 'libs', 'parse-agent', 'dist');
    const build = await exec(
      process.execPath,
      [TSC, '-p', join(LIBRARY, 'tsconfig.lib.json'), '--outDir', outDir],
      ROOT,
    );
    expect(build).toMatchObject({ code: 0, stdout: '' });

    const parse = testParseConnection();
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      npm_config_yes: 'false',
      HOME: process.env.HOME ?? tmpdir(),
      PARSE_SERVER_URL: parse.serverURL,
      PARSE_APP_ID: parse.appId,
      PARSE_MASTER_KEY: parse.masterKey,
      PARSE_JAVASCRIPT_KEY: parse.javascriptKey,
    };
    const call = await exec(
      'npx',
      [
        'parse-agent',
        '--models',
        'models.js',
        'call',
        'count_objects',
        JSON.stringify({ class_name: className }),
      ],
      clone,
      env,
    );
    // The whole run on failure: the CLI's stderr says what went wrong.
    expect(call).toMatchObject({ code: 0 });
    expect(JSON.parse(call.stdout)).toEqual({
      success: true,
      data: expect.objectContaining({ count: 1 }),
    });
  }, 300_000);
});
