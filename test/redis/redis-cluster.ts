import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { findFreePort } from '../../src/embedded/free-port';

/** Whether redis-server and redis-cli (7.0 or later, for `--cluster-port`) are installed. */
export function redisClusterToolsInstalled(): boolean {
  const server = spawnSync('redis-server', ['--version'], { encoding: 'utf8', timeout: 3000 });
  const cli = spawnSync('redis-cli', ['--version'], { encoding: 'utf8', timeout: 3000 });
  const major = Number(/v=(\d+)\./.exec(server.stdout ?? '')?.[1] ?? 0);
  return server.status === 0 && cli.status === 0 && major >= 7;
}

/** One master of a local cluster this suite owns. */
export interface ClusterNodeProcess {
  port: number;
  /** SIGKILL, resolved once the port is closed. */
  kill(): Promise<void>;
  /** Starts it again on the same port and cluster config (it rejoins with its slots). */
  start(): Promise<void>;
}

/** A Redis Cluster of three masters, started in a temp dir and removed by `stop()`. */
export interface LocalRedisCluster {
  /** `redis://127.0.0.1:<port>` of each master, the startup nodes for `redis: { cluster }`. */
  urls: string[];
  nodes: ClusterNodeProcess[];
  /** Runs redis-cli against the first live master and returns its trimmed output. */
  cli(...args: string[]): string;
  /** Runs redis-cli against the master on `port`. */
  cliOn(port: number, ...args: string[]): string;
  /** The port of the master serving `slot`. */
  masterOfSlot(slot: number): number;
  /** Waits until every live master reports `cluster_state:ok`. */
  waitOk(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `masters` redis-server processes with cluster mode on free ports (client and bus ports
 * both chosen free), joins them with `redis-cli --cluster create` and waits for `cluster_state:ok`.
 * `cluster-require-full-coverage no` keeps the slots of the living masters served while one is
 * down, as operators of a cluster without replicas set it.
 */
export async function startLocalRedisCluster(masters = 3): Promise<LocalRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'parse-agent-cluster-'));
  const nodes: ClusterNodeProcess[] = [];
  const children = new Map<number, ChildProcess>();
  const run = (port: number, busPort: number) => {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--cluster-port',
        String(busPort),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '2000',
        '--cluster-require-full-coverage',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
    children.set(port, child);
    return waitForPort(port, true);
  };
  const used = new Set<number>();
  const freePort = async () => {
    for (;;) {
      const port = await findFreePort();
      if (!used.has(port)) {
        used.add(port);
        return port;
      }
    }
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort();
      const busPort = await freePort();
      await run(port, busPort);
      nodes.push({
        port,
        kill: async () => {
          const child = children.get(port);
          children.delete(port);
          if (!child || child.exitCode !== null) return;
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await exited;
          await waitForPort(port, false);
        },
        start: () => run(port, busPort),
      });
    }
    const created = spawnSync(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (created.status !== 0) {
      throw new Error(`redis-cli --cluster create failed:\n${created.stdout}\n${created.stderr}`);
    }
  } catch (error) {
    for (const child of children.values()) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const cliOn = (port: number, args: string[]) => {
    const out = spawnSync('redis-cli', ['-p', String(port), ...args], {
      encoding: 'utf8',
      timeout: 5000,
    });
    return (out.stdout ?? '').trim();
  };
  const live = () => nodes.filter((n) => children.has(n.port));
  const cluster: LocalRedisCluster = {
    urls: nodes.map((n) => `redis://127.0.0.1:${n.port}`),
    nodes,
    cli: (...args) => cliOn(live()[0].port, args),
    cliOn: (port, ...args) => cliOn(port, args),
    masterOfSlot(slot) {
      // CLUSTER NODES: "<id> <ip>:<port>@<bus> <flags> ... <first>-<last> ..." per node.
      const lines = cliOn(live()[0].port, ['CLUSTER', 'NODES']).split('\n');
      for (const line of lines) {
        const fields = line.trim().split(' ');
        const port = Number(/:(\d+)@/.exec(fields[1] ?? '')?.[1]);
        for (const range of fields.slice(8)) {
          const [first, last = first] = range.split('-').map(Number);
          if (first <= slot && slot <= last) return port;
        }
      }
      throw new Error(`no master serves slot ${slot}:\n${lines.join('\n')}`);
    },
    async waitOk(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const states = live().map((n) => cliOn(n.port, ['CLUSTER', 'INFO']));
        if (states.every((s) => s.includes('cluster_state:ok'))) return;
        if (Date.now() > deadline) {
          throw new Error(`cluster did not reach cluster_state:ok:\n${states.join('\n---\n')}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      for (const node of nodes) await node.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await cluster.waitOk();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

async function waitForPort(port: number, open: boolean): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const isOpen = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (isOpen === open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis port ${port} did not become ${open ? 'open' : 'closed'}`);
}
