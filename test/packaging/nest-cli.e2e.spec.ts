import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { findFreePort } from '../../src/embedded/free-port';

const ROOT = resolve(__dirname, '..', '..');

interface Run {
  code: number;
  output: string;
}

function exec(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((done) => {
    execFile(
      'npx',
      args,
      { cwd, env, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, output: `${String(stdout)}${String(stderr)}` });
      },
    );
  });
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** What a clone holds that `nest build` reads: no dist/ of the app or of the library. */
const COPIED = [
  'package.json',
  'nest-cli.json',
  'tsconfig.json',
  'tsconfig.app.json',
  'src',
  'libs/parse-agent/package.json',
  'libs/parse-agent/tsconfig.lib.json',
  'libs/parse-agent/src',
  'libs/parse-agent/console',
];

/**
 * nest-cli.json: a Nest engineer's `npx nest build` and `npx nest start` on a fresh clone. The
 * copy holds the sources without any build output; its node_modules links each installed package
 * of this checkout (installing again would take minutes) except the workspace's own, which points
 * at the copy's library as `npm ci` links it, so nothing resolves to a library build made here.
 */
describe('nest-cli.json: npx nest build and npx nest start on a fresh clone', () => {
  let clone: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    clone = await mkdtemp(join(tmpdir(), 'parse-agent-nest-cli-'));
    await chmod(clone, 0o755); // embedded PostgreSQL runs as another user when we are root
    for (const entry of COPIED) {
      await cp(join(ROOT, entry), join(clone, entry), {
        recursive: true,
        filter: (source) => !['dist', 'node_modules'].includes(basename(source)),
      });
    }
    const modules = join(clone, 'node_modules');
    await mkdir(modules);
    for (const name of await readdir(join(ROOT, 'node_modules'))) {
      if (name === 'nestjs-parse-agent') continue;
      await symlink(join(ROOT, 'node_modules', name), join(modules, name));
    }
    await symlink(join('..', 'libs', 'parse-agent'), join(modules, 'nestjs-parse-agent'));
    // npm_config_yes=false: npx must run the installed @nestjs/cli, never fetch one.
    env = { ...process.env, npm_config_yes: 'false', LOG_FORMAT: 'json' };
    delete env.TESTING;
  });
  afterAll(async () => {
    await rm(clone, { recursive: true, force: true });
  });

  it('nest build compiles the demo with the library from its sources', async () => {
    const build = await exec(['nest', 'build'], clone, env);
    expect(build).toMatchObject({ code: 0 });
    expect(await exists(join(clone, 'dist/nest/src/main.js'))).toBe(true);
    expect(await exists(join(clone, 'dist/nest/src/example/app.module.js'))).toBe(true);
    expect(await exists(join(clone, 'dist/nest/libs/parse-agent/src/index.js'))).toBe(true);
    // The library was not built on its own: the demo runs on the copy compiled beside it.
    expect(await exists(join(clone, 'libs/parse-agent/dist'))).toBe(false);
  }, 300_000);

  it('nest start serves the demo until SIGINT, which stops it', async () => {
    const port = await findFreePort();
    const dataDir = join(clone, '.data');
    let output = '';
    // Its own process group, as a terminal runs it: Ctrl-C signals npx, nest and the demo alike.
    const child: ChildProcess = spawn('npx', ['nest', 'start'], {
      cwd: clone,
      env: { ...env, PORT: String(port), DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // Closed once every process writing to its output is gone: npx, nest, the demo, PostgreSQL.
    const closed = new Promise<void>((done) => child.once('close', () => done()));
    try {
      const started = Date.now();
      while (!output.includes('demo is up')) {
        if (Date.now() - started > 240_000 || child.exitCode !== null || child.signalCode) {
          throw new Error(`the demo did not come up:\n${output.slice(-4000)}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
      expect({ status: ready.status, body: await ready.json() }).toEqual({
        status: 200,
        body: { status: 'ready', notReady: [] },
      });
      // The console's page is read from the library's package folder, not from the build output.
      const page = await fetch(`http://127.0.0.1:${port}/console/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<html');
      process.kill(-child.pid!, 'SIGINT');
      await closed;
      // (The tail of the output, so a failure shows what the demo said last.)
      expect(output.slice(-3000)).toMatch(/"message":"Stopped"/);
      expect(output).not.toContain('Failed to start');
    } finally {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the whole group has exited
      }
    }
  }, 330_000);

  it('nest build parse-agent builds the library as a package', async () => {
    const build = await exec(['nest', 'build', 'parse-agent'], clone, env);
    expect(build).toMatchObject({ code: 0 });
    expect(await exists(join(clone, 'libs/parse-agent/dist/index.js'))).toBe(true);
    expect(await exists(join(clone, 'libs/parse-agent/dist/index.d.ts'))).toBe(true);
  }, 300_000);
});
