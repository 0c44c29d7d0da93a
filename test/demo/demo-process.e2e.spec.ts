import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { findFreePort } from '../../src/embedded/free-port';

const ROOT = resolve(__dirname, '..', '..');
const GRACE_MS = 2_000;

interface DemoProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; at: number }>;
}

/** `ownGroup`: the demo leads a process group of its own, as a shell's foreground job does. */
function startDemo(env: Record<string, string>, ownGroup = false): DemoProcess {
  const child = spawn(
    process.execPath,
    ['-r', join(ROOT, 'test/harness/ts-register.js'), join(ROOT, 'src/main.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, LOG_FORMAT: 'json', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: ownGroup,
    },
  );
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((done) =>
    child.once('exit', (code) => done({ code, at: Date.now() })),
  );
  return { child, output: () => text, exited };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The JSON log lines of a demo's output (the banner and plain lines are skipped). */
const logLines = (output: string) =>
  output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: string; message: string });

/** A stack frame anywhere in the output, plain or inside a JSON string. */
const STACK_FRAME = /\s+at \S.*:\d+:\d+\)?/;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The demo as an operator runs it: its own process, embedded PostgreSQL, signals, DATA_DIR. */
describe('demo process (embedded PostgreSQL + Parse Server, child process)', () => {
  let dir: string;
  let port: number;
  let demo: DemoProcess;
  const base = () => `http://127.0.0.1:${port}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'demo-process-'));
    await chmod(dir, 0o755); // embedded PostgreSQL runs as another user when we are root
    port = await findFreePort();
    demo = startDemo({ DATA_DIR: dir, PORT: String(port), SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    await until(() => demo.output().includes('demo is up'), 120_000, 'the banner');
  }, 130_000);
  afterAll(async () => {
    if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('is ready once the banner is out, and a demo user can log in', async () => {
    const live = await fetch(`${base()}/health/live`);
    expect(live.status).toBe(200);
    const ready = await fetch(`${base()}/health/ready`);
    expect(await ready.json()).toEqual({ status: 'ready', notReady: [] });
    const login = await fetch(`${base()}/parse/login`, {
      method: 'POST',
      headers: { 'X-Parse-Application-Id': 'parse-agent-demo', 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'demo-password' }),
    });
    expect(login.status).toBe(200);
    // Logs are JSON lines when stdout is not a terminal.
    const line = demo
      .output()
      .split('\n')
      .find((l) => l.includes('Seeded') || l.includes('Kept'));
    expect(() => JSON.parse(line!)).not.toThrow();
  });

  it('a healthy start logs no warning or error line, and the example passes its own metadata audit', async () => {
    const upTo = demo.output().slice(0, demo.output().indexOf('demo is up'));
    const alarms = logLines(upTo).filter((l) => l.level !== 'log');
    expect(alarms).toEqual([]);
    expect(upTo).not.toContain('unreachable');
    // The audit runs in the background once Parse Server answered (auditMetadataOnBoot).
    const audit = () =>
      logLines(demo.output()).find((l) => l.message.startsWith('Agent metadata audit'));
    await until(() => audit() !== undefined, 30_000, 'the metadata audit');
    expect(audit()!.message).toMatch(
      /^Agent metadata audit: \d+ classes \(@AgentVisible models\)\n {2}no gaps found$/,
    );
  }, 40_000);

  it('prints the PostgreSQL URI in the banner, and another client can use it', async () => {
    const uri = /PostgreSQL: +(postgres:\/\/\S+)/.exec(demo.output())?.[1];
    expect(uri).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/parse$/);
    expect(demo.output()).toContain("the demo's local dev database");
    const client = new Client({ connectionString: uri });
    await client.connect();
    try {
      const orders = await client.query('SELECT count(*)::int AS n FROM "Order"');
      expect(orders.rows[0].n).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });

  it('keeps the generated operator key in DATA_DIR', async () => {
    const key = (await readFile(join(dir, 'mcp-api-key'), 'utf8')).trim();
    expect(key.length).toBeGreaterThanOrEqual(16);
    expect(demo.output()).toContain(key);
  });

  it('a second demo on the same DATA_DIR says the directory is in use, naming the PID', async () => {
    const second = startDemo({ DATA_DIR: dir, PORT: String(await findFreePort()) });
    const { code } = await second.exited;
    expect(code).toBe(1);
    expect(second.output()).toContain(
      `The data directory ${dir} is in use by another demo process (PID ${demo.child.pid}).`,
    );
    expect(second.output()).not.toContain('undefined');
  }, 60_000);

  it('a second demo on a busy port says so and names PORT, before touching its DATA_DIR', async () => {
    const otherDir = await mkdtemp(join(tmpdir(), 'demo-busy-port-'));
    try {
      const second = startDemo({ DATA_DIR: otherDir, PORT: String(port) });
      const { code } = await second.exited;
      expect(code).toBe(1);
      expect(second.output()).toContain(
        `Configuration error: port ${port} is in use (something already listens on 127.0.0.1:${port}, perhaps another demo); set PORT to a free port`,
      );
      // Nothing was started: no PostgreSQL, no lock, no check against the other demo's server.
      expect(second.output()).not.toMatch(/masterKey|PostgreSQL|Parse Server/);
      await expect(stat(join(otherDir, 'demo.lock'))).rejects.toThrow();
      await expect(stat(join(otherDir, 'postgres'))).rejects.toThrow();
    } finally {
      await rm(otherDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('on SIGTERM answers the calls in flight, closes streams with a final message, stops PostgreSQL and exits 0 in time', async () => {
    const key = (await readFile(join(dir, 'mcp-api-key'), 'utf8')).trim();
    const postmaster = Number(
      (await readFile(join(dir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
    expect(alive(postmaster)).toBe(true);
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'X-MCP-API-Key': key,
    };
    // The standalone GET stream stays open until shutdown.
    const stream = await fetch(`${base()}/mcp`, {
      headers: { ...headers, Accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const streamText = stream.text();

    // Keep calls going across the signal: each must be answered (a result or a JSON-RPC error).
    let signalled = false;
    const answers: Array<{ status: number; body: Record<string, unknown> | undefined }> = [];
    const failures: string[] = [];
    const caller = async (n: number) => {
      for (let i = 0; !signalled || i < 1; i++) {
        try {
          const res = await fetch(`${base()}/mcp`, {
            method: 'POST',
            headers,
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: `${n}-${i}`,
              method: 'tools/call',
              params: { name: 'query_class', arguments: { class_name: 'Order', limit: 100 } },
            }),
          });
          answers.push({ status: res.status, body: (await res.json()) as Record<string, unknown> });
        } catch (error) {
          // After the server closed its port, connecting fails: that is not an unanswered call.
          const cause = (error as { cause?: { code?: string } }).cause?.code;
          if (cause !== 'ECONNREFUSED') failures.push(String(cause ?? error));
          return;
        }
        if (signalled) return;
      }
    };
    const callers = [1, 2, 3, 4].map(caller);
    await new Promise((r) => setTimeout(r, 300));
    const sentAt = Date.now();
    demo.child.kill('SIGTERM');
    signalled = true;
    const { code, at } = await demo.exited;
    await Promise.all(callers);

    expect(code).toBe(0);
    expect(at - sentAt).toBeLessThan(GRACE_MS + 5_000);
    expect(failures).toEqual([]);
    for (const answer of answers) {
      expect([200, 503]).toContain(answer.status);
      expect(answer.body?.jsonrpc).toBe('2.0');
      expect('result' in answer.body! || 'error' in answer.body!).toBe(true);
    }
    expect(await streamText).toContain(': server shutting down');
    expect(alive(postmaster)).toBe(false);
    await expect(stat(join(dir, 'demo.lock'))).rejects.toThrow();
    expect(demo.output()).toContain('Stopped');
  }, 30_000);

  it('after a crash, the next start stops the PostgreSQL the dead demo left running and comes up', async () => {
    const first = startDemo({ DATA_DIR: dir, PORT: String(await findFreePort()) });
    await until(() => first.output().includes('demo is up'), 120_000, 'the first banner');
    const orphan = Number(
      (await readFile(join(dir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
    );
    first.child.kill('SIGKILL'); // a crash: nothing of the demo's shutdown runs
    await first.exited;
    expect(alive(orphan)).toBe(true);
    expect((await readFile(join(dir, 'demo.lock'), 'utf8')).trim()).toBe(String(first.child.pid));

    const next = startDemo({ DATA_DIR: dir, PORT: String(await findFreePort()) });
    try {
      await until(
        () => next.output().includes('demo is up') || next.child.exitCode !== null,
        120_000,
        'the second banner',
      );
      expect(next.output()).toContain(
        `Stopped PostgreSQL (PID ${orphan}) left running by a demo that did not stop`,
      );
      expect(next.output()).toContain('demo is up');
      // One DATA_DIR, one PostgreSQL port: a client's POSTGRES_URI outlives restarts.
      const portIn = (output: string) =>
        /PostgreSQL: +postgres:\/\/\S+@127\.0\.0\.1:(\d+)\//.exec(output)?.[1];
      expect(portIn(demo.output())).toMatch(/^\d+$/);
      expect(portIn(first.output())).toBe(portIn(demo.output()));
      expect(portIn(next.output())).toBe(portIn(demo.output()));
      // A start on existing data (Parse Server re-applies the demo's class definitions to it) is
      // as quiet as a fresh one.
      const upTo = next.output().slice(0, next.output().indexOf('demo is up'));
      expect(logLines(upTo).filter((l) => l.level !== 'log')).toEqual([]);
      expect(alive(orphan)).toBe(false);
      next.child.kill('SIGTERM');
      expect((await next.exited).code).toBe(0);
    } finally {
      if (next.child.exitCode === null) next.child.kill('SIGKILL');
    }
  }, 150_000);

  it('Ctrl-C at a terminal (SIGINT to the whole process group): PostgreSQL, in a group of its own, is stopped after the drain; "Stopped", exit 0, quickly', async () => {
    const ownDir = await mkdtemp(join(tmpdir(), 'demo-group-sigint-'));
    await chmod(ownDir, 0o755);
    const own = startDemo(
      { DATA_DIR: ownDir, PORT: String(await findFreePort()), SHUTDOWN_GRACE_MS: '2000' },
      true,
    );
    try {
      await until(() => own.output().includes('demo is up'), 120_000, 'the banner');
      const postmaster = Number(
        (await readFile(join(ownDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
      );
      const groupOf = (pid: number) =>
        Number(
          readFileSync(`/proc/${pid}/stat`, 'utf8')
            .replace(/^.*\) /s, '')
            .split(' ')[2],
        );
      expect(groupOf(own.child.pid!)).toBe(own.child.pid);
      expect(groupOf(postmaster)).not.toBe(own.child.pid);

      const sentAt = Date.now();
      process.kill(-own.child.pid!, 'SIGINT'); // what the terminal does on Ctrl-C
      const { code, at } = await own.exited;
      expect(code).toBe(0);
      expect(at - sentAt).toBeLessThan(2_000 + 5_000);
      const messages = logLines(own.output()).map((l) => l.message);
      expect(messages).toContain('SIGINT received, shutting down (grace period 2000 ms)');
      expect(messages[messages.length - 1]).toBe('Stopped');
      // PostgreSQL was not signalled by the terminal: no error line from a pool losing its server.
      expect(logLines(own.output()).filter((l) => l.level !== 'log')).toEqual([]);
      expect(alive(postmaster)).toBe(false);
      await expect(stat(join(ownDir, 'demo.lock'))).rejects.toThrow();
    } finally {
      if (own.child.exitCode === null) process.kill(-own.child.pid!, 'SIGKILL');
      await rm(ownDir, { recursive: true, force: true });
    }
  }, 150_000);

  it('Ctrl-C at a terminal, where PostgreSQL (in the same process group) stops first: "Stopped", exit 0', async () => {
    // A terminal's Ctrl-C signals the whole process group, the embedded PostgreSQL included, and
    // PostgreSQL's fast shutdown can finish before the demo's drain reaches it. Made certain here:
    // PostgreSQL stops first, then the demo gets its SIGINT. The demo must still finish its
    // shutdown, not wait for an exit that already happened (the process would then end silently).
    const ownDir = await mkdtemp(join(tmpdir(), 'demo-ctrl-c-'));
    await chmod(ownDir, 0o755);
    const own = startDemo({ DATA_DIR: ownDir, PORT: String(await findFreePort()) });
    try {
      await until(() => own.output().includes('demo is up'), 120_000, 'the banner');
      const postmaster = Number(
        (await readFile(join(ownDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0],
      );
      process.kill(postmaster, 'SIGINT');
      await until(() => !alive(postmaster), 30_000, 'PostgreSQL to stop');
      own.child.kill('SIGINT');
      const { code } = await own.exited;
      expect(code).toBe(0);
      expect(own.output()).toContain('SIGINT received, shutting down');
      expect(logLines(own.output()).map((l) => l.message)).toContain('Stopped');
      await expect(stat(join(ownDir, 'demo.lock'))).rejects.toThrow();
    } finally {
      if (own.child.exitCode === null) own.child.kill('SIGKILL');
      await rm(ownDir, { recursive: true, force: true });
    }
  }, 150_000);

  it('SIGTERM while PostgreSQL starts: one plain line, no stack trace, PostgreSQL stopped, exit 0', async () => {
    const starting = startDemo({ DATA_DIR: dir, PORT: String(await findFreePort()) });
    try {
      await until(
        () => starting.output().includes('Starting embedded PostgreSQL'),
        120_000,
        'PostgreSQL starting',
      );
      starting.child.kill('SIGTERM');
      const { code } = await starting.exited;
      const output = starting.output();
      expect(code).toBe(0);
      expect(output).toContain('SIGTERM received during start-up');
      expect(output).toContain('Stopped');
      expect(output).not.toContain('demo is up');
      expect(output).not.toMatch(STACK_FRAME);
      expect(logLines(output).filter((l) => l.level !== 'log')).toEqual([]);
      await expect(stat(join(dir, 'demo.lock'))).rejects.toThrow();
      await expect(stat(join(dir, 'postgres', 'postmaster.pid'))).rejects.toThrow();
    } finally {
      if (starting.child.exitCode === null) starting.child.kill('SIGKILL');
    }
  }, 150_000);

  it('a signal during start-up (while the demo data is seeded) stops it cleanly, exit 0', async () => {
    const early = await mkdtemp(join(tmpdir(), 'demo-early-stop-'));
    await chmod(early, 0o755);
    const earlyPort = await findFreePort();
    const starting = startDemo({ DATA_DIR: early, PORT: String(earlyPort) });
    try {
      // The HTTP server listens before the demo data is seeded: signal as soon as it answers.
      await until(
        () => starting.output().includes('Nest application successfully started'),
        120_000,
        'the listener',
      );
      starting.child.kill('SIGTERM');
      const { code } = await starting.exited;
      const output = starting.output();
      expect(output).not.toContain('demo is up'); // the signal did arrive during start-up
      expect({ code, output }).toEqual({ code: 0, output: expect.any(String) as string });
      expect(output).toContain('Stopped');
      expect(output).not.toContain('uncaught exception');
      expect(output).not.toContain('Called end on pool more than once');
      expect(output).not.toContain('Failed to start');
      expect(output).not.toMatch(STACK_FRAME);
      expect(logLines(output).filter((l) => l.level === 'error')).toEqual([]);
      await expect(stat(join(early, 'demo.lock'))).rejects.toThrow();
    } finally {
      if (starting.child.exitCode === null) starting.child.kill('SIGKILL');
      await rm(early, { recursive: true, force: true });
    }
  }, 150_000);
});
