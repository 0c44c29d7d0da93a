import { execFile, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

/**
 * Benches that cannot rot: every script under bench/ runs here in smoke mode (BENCH_SMOKE=1: tiny
 * sizes, the real processes and calls end to end, a non-zero exit on any error or wrong answer),
 * so a bench broken by a library change fails CI instead of the next person who runs it. The
 * figures a smoke run prints mean nothing; only that it ran and answered right is checked.
 *
 * The benches run the built output (dist/ and the library's dist/), so the suite builds once
 * first, as `npm run build` does. They run a few at a time: each starts its own PostgreSQL, Parse
 * Server and apps, and most of their time is spent waiting on start-up and seeding.
 */
const ROOT = resolve(__dirname, '..', '..');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PARALLEL = 3;
const BENCH_LIMIT_MS = 150_000;

interface Run {
  code: number | string;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const started = Date.now();
  return new Promise((done) => {
    execFile(
      file,
      args,
      {
        cwd: ROOT,
        env: { ...process.env, ...env },
        timeout: BENCH_LIMIT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: 32 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (error.code ?? error.signal ?? -1) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr), ms: Date.now() - started });
      },
    );
  });
}

/** Whether a TCP connection to the Redis URL opens (checked once, at load). */
function redisReachable(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      `const s=require('net').connect(${Number(port || 6379)},${JSON.stringify(hostname)});s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));setTimeout(()=>process.exit(1),1500);`,
    ],
    { timeout: 3000 },
  );
  return probe.status === 0;
}

const redisUp = redisReachable(REDIS_URL);
if (!redisUp) {
  console.warn(`SKIPPED bench:redis smoke: no Redis at ${REDIS_URL} (set TEST_REDIS_URL).`);
}

/** Each bench script, in the order they start. */
const BENCHES = [
  'pg-group-by.js',
  'run.js',
  'startup.js',
  'soak.js',
  'ab.js',
  'fastify.js',
  'tokens.js',
  'profile.js',
  'semantic-search.js',
  'live-query.js',
  ...(redisUp ? ['redis.js'] : []),
  // Starts its own redis-server on a free port; skipped with bench:redis when no Redis runs here.
  ...(redisUp ? ['redis-cost.js'] : []),
];

/** The last JSON object line a bench printed. */
function lastJson(stdout: string): Record<string, unknown> {
  const line = stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`no JSON result line in:\n${stdout}`);
  return JSON.parse(line) as Record<string, unknown>;
}

describe('every bench runs in smoke mode (BENCH_SMOKE=1)', () => {
  const results = new Map<string, Promise<Run>>();

  beforeAll(async () => {
    for (const project of ['libs/parse-agent/tsconfig.lib.json', 'tsconfig.build.json']) {
      const build = await run(process.execPath, [TSC, '-p', project]);
      if (build.code !== 0) throw new Error(`tsc -p ${project} failed:\n${build.stdout}`);
    }
    // A small pool: PARALLEL benches at a time, each result kept for its own test.
    const queue = [...BENCHES];
    const settle = new Map<string, (r: Run) => void>();
    for (const name of BENCHES) {
      results.set(name, new Promise<Run>((r) => settle.set(name, r)));
    }
    const worker = async () => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        settle.get(name)!(
          await run(process.execPath, [join(ROOT, 'bench', name)], {
            BENCH_SMOKE: '1',
            BENCH_REDIS_URL: REDIS_URL,
          }),
        );
      }
    };
    for (let i = 0; i < PARALLEL; i++) void worker();
  }, 120_000);

  async function smoke(name: string): Promise<Run> {
    const result = await results.get(name)!;
    if (result.code !== 0) {
      throw new Error(
        `bench/${name} --smoke exited with ${result.code} after ${result.ms} ms\n` +
          `stdout:\n${result.stdout.slice(-4000)}\nstderr:\n${result.stderr.slice(-4000)}`,
      );
    }
    return result;
  }

  it('bench:pg: the direct path, paging over MCP and hand SQL give the seed answer', async () => {
    const { stdout } = await smoke('pg-group-by.js');
    const out = lastJson(stdout);
    // 3,000 rows, the user sees two thirds of them (the bench itself checks the per-status counts).
    expect(out).toMatchObject({ smoke: true, rows: 3000, visibleToUser: 2000 });
    expect(out.directMs).toEqual(expect.any(Number));
    expect(stdout).toMatch(/2000 rows moved in \d+ calls/);
  }, 200_000);

  it('bench: query_class vs Parse REST, tools/list vs the SDK, idle SSE streams, no errors', async () => {
    const { stdout } = await smoke('run.js');
    expect(stdout).toMatch(/16 conn.*MCP +\d+ req\/s.*errors 0\/0\/0/);
    expect(stdout).toMatch(/tools\/list[\s\S]*ours +\d+ req\/s \| SDK +\d+ req\/s.*errors 0\/0/);
    expect(stdout).toMatch(/open 20\/20/);
    expect(stdout).toMatch(/Nest floor \(one Nest route, no library\): +\d+ req\/s.*errors 0/);
  }, 200_000);

  it('bench:startup: the demo comes up on a fresh DATA_DIR, then again on the kept data', async () => {
    const out = lastJson((await smoke('startup.js')).stdout);
    expect(out).toMatchObject({ smoke: true });
    expect(out.firstStartMs).toBeGreaterThan(0);
    expect(out.restartMs).toEqual([expect.any(Number)]);
  }, 200_000);

  it('bench:live: every session hears every REST write through LiveQuery', async () => {
    const out = lastJson((await smoke('live-query.js')).stdout);
    expect(out).toMatchObject({ bench: 'live-query', smoke: true });
    expect(out.notifications).toBe((out.sessions as number) * (out.writes as number));
    expect((out.latencyMs as { p50: number }).p50).toEqual(expect.any(Number));
  }, 200_000);

  it('bench:soak: the mixed load with memory samples, no errors', async () => {
    const out = lastJson((await smoke('soak.js')).stdout);
    expect(out).toMatchObject({ errors: 0 });
    expect(out.total).toBeGreaterThan(0);
    expect(out.heapSlope).toEqual(expect.any(Number));
  }, 200_000);

  it('bench:ab: two MCP apps (this tree twice) report CPU per call, no errors', async () => {
    const { stdout } = await smoke('ab.js');
    expect(stdout).toMatch(/before: \d+ req\/s, [\d.]+ ms CPU\/call \(medians\), errors 0/);
    expect(stdout).toMatch(/after: +\d+ req\/s, [\d.]+ ms CPU\/call \(medians\), errors 0/);
  }, 200_000);

  it('bench:tokens: 20 tasks, the same information on both sides', async () => {
    const { stdout } = await smoke('tokens.js');
    expect(stdout).toMatch(/All 20 tasks: \d+ -> \d+ tokens/);
    expect(stdout).toContain('(same information, checked)');
  }, 200_000);

  (redisUp ? it : it.skip)(
    'bench:redis: in-memory node, one and two nodes sharing Redis, no errors',
    async () => {
      const { stdout } = await smoke('redis.js');
      for (const tool of ['bench_echo', 'query_class']) {
        expect(stdout).toContain(`tools/call ${tool}`);
      }
      expect(stdout.match(/two nodes on Redis.*errors 0/g)).toHaveLength(2);
    },
    200_000,
  );

  (redisUp ? it : it.skip)(
    'bench:redis-cost: Redis commands and round trips per call (JSON, resumable SSE), throughput at 1 and 16 connections',
    async () => {
      const out = lastJson((await smoke('redis-cost.js')).stdout);
      expect(out).toMatchObject({ smoke: true });
      for (const kind of ['json', 'sse']) {
        expect(out[kind]).toMatchObject({
          sent: expect.any(Number),
          roundTrips: expect.any(Number),
        });
      }
      expect((out.json as { roundTrips: number }).roundTrips).toBeGreaterThan(0);
      expect(out.c1).toMatchObject({ ratio: expect.any(Number) });
      expect(out.c16).toMatchObject({ ratio: expect.any(Number) });
    },
    200_000,
  );

  it('bench:profile: a CPU profile of query_class, its time grouped by place, the library among them', async () => {
    const out = lastJson((await smoke('profile.js')).stdout) as {
      tool: string;
      cpuPerCallMs: number;
      busyMs: number;
      places: Record<string, number>;
    };
    expect(out.tool).toBe('query_class');
    expect(out.cpuPerCallMs).toBeGreaterThan(0);
    expect(out.busyMs).toBeGreaterThan(0);
    expect(Object.keys(out.places).some((place) => place.startsWith('lib/'))).toBe(true);
  }, 200_000);

  it('bench:fastify: query_class and a no-I/O call on Express and on Fastify, no errors', async () => {
    const { stdout } = await smoke('fastify.js');
    const { results } = lastJson(stdout) as {
      results: Array<{ call: string; platform: string; rps: number; errors: number }>;
    };
    expect(results.map((r) => `${r.call}/${r.platform}`)).toEqual([
      'query_class/express',
      'query_class/fastify',
      'bench_echo/express',
      'bench_echo/fastify',
    ]);
    for (const row of results) {
      expect(row.errors).toBe(0);
      expect(row.rps).toBeGreaterThan(0);
    }
  }, 200_000);
});
