import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Separate hosts for the scale-out suites: one Linux network namespace per host, all on one switch
 * (a bridge in a namespace of its own), plus a link from the test process' namespace so the test
 * can reach them. Addresses are in 10.231.<random>.0/24, used only on these links; everything the
 * harness made is removed by `destroy()` (deleting the namespaces deletes their links).
 */

function ip(args: string[]): { ok: boolean; error: string } {
  const run = spawnSync('ip', args, { encoding: 'utf8', timeout: 10_000 });
  return { ok: run.status === 0, error: `${run.stderr ?? ''}${run.error?.message ?? ''}`.trim() };
}

function must(args: string[]): void {
  const run = ip(args);
  if (!run.ok) throw new Error(`ip ${args.join(' ')} failed: ${run.error}`);
}

/** Why namespaces cannot be made here (not root, no `ip`, no CAP_SYS_ADMIN), or undefined. */
export function netnsUnavailableReason(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'creating network namespaces needs root';
  const probe = `pa-probe-${randomBytes(3).toString('hex')}`;
  const added = ip(['netns', 'add', probe]);
  if (!added.ok) return `\`ip netns add\` failed: ${added.error || 'ip not installed?'}`;
  ip(['netns', 'del', probe]);
  return undefined;
}

/** Whether a binary runs (`<name> -v` or `--version`). */
export function installed(binary: string, versionFlag = '-v'): boolean {
  return spawnSync(binary, [versionFlag], { timeout: 5000 }).status === 0;
}

export interface Host {
  name: string;
  /** The namespace's name (for `ip netns exec`). */
  netns: string;
  address: string;
}

export class Topology {
  protected readonly children = new Set<ChildProcess>();
  protected destroyed = false;

  protected constructor(
    readonly tag: string,
    readonly subnet: string,
    readonly hosts: Map<string, Host>,
    /** The test process' own address on the switch. */
    readonly clientAddress: string,
    protected readonly namespaces: string[],
  ) {}

  /** Makes one namespace per name, all on one switch with the test process. */
  static create(names: string[]): Topology {
    const tag = randomBytes(2).toString('hex');
    const subnet = `10.231.${randomInt(1, 250)}`;
    const sw = `pa-${tag}-sw`;
    const namespaces: string[] = [];
    const hosts = new Map<string, Host>();
    try {
      must(['netns', 'add', sw]);
      namespaces.push(sw);
      must(['-n', sw, 'link', 'add', 'br0', 'type', 'bridge']);
      must(['-n', sw, 'link', 'set', 'br0', 'up']);
      // The test process' link (its end stays in this namespace, removed with the switch).
      const rootEnd = `pa${tag}r`;
      must(['link', 'add', rootEnd, 'type', 'veth', 'peer', 'name', `pa${tag}s`]);
      must(['link', 'set', `pa${tag}s`, 'netns', sw]);
      must(['-n', sw, 'link', 'set', `pa${tag}s`, 'master', 'br0', 'up']);
      must(['addr', 'add', `${subnet}.1/24`, 'dev', rootEnd]);
      must(['link', 'set', rootEnd, 'up']);
      names.forEach((name, i) => {
        const netns = `pa-${tag}-${name}`;
        const address = `${subnet}.${10 + i}`;
        must(['netns', 'add', netns]);
        namespaces.push(netns);
        must(['-n', netns, 'link', 'set', 'lo', 'up']);
        must(['link', 'add', `pa${tag}h${i}`, 'type', 'veth', 'peer', 'name', `pa${tag}p${i}`]);
        must(['link', 'set', `pa${tag}h${i}`, 'netns', netns]);
        must(['link', 'set', `pa${tag}p${i}`, 'netns', sw]);
        must(['-n', sw, 'link', 'set', `pa${tag}p${i}`, 'master', 'br0', 'up']);
        must(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', `pa${tag}h${i}`]);
        must(['-n', netns, 'link', 'set', `pa${tag}h${i}`, 'up']);
        hosts.set(name, { name, netns, address });
      });
    } catch (error) {
      for (const netns of namespaces.reverse()) ip(['netns', 'del', netns]);
      ip(['link', 'del', `pa${tag}r`]);
      throw error;
    }
    return new Topology(tag, subnet, hosts, `${subnet}.1`, namespaces);
  }

  host(name: string): Host {
    const host = this.hosts.get(name);
    if (!host) throw new Error(`no host ${name}`);
    return host;
  }

  /** Runs a command on a host; the process is killed by destroy() if still running. */
  spawn(hostName: string, command: string, args: string[]): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', this.host(hostName).netns, command, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.track(child);
    return child;
  }

  track(child: ChildProcess): void {
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
  }

  /** Cuts a host off the switch (its link goes down) or restores it. */
  setLink(hostName: string, up: boolean): void {
    const index = [...this.hosts.keys()].indexOf(hostName);
    must(['-n', this.namespaces[0], 'link', 'set', `pa${this.tag}p${index}`, up ? 'up' : 'down']);
  }

  /** Kills what runs on the hosts and removes every namespace and link made. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all(
      [...this.children].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(resolve, 5000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGKILL');
          }),
      ),
    );
    for (const netns of [...this.namespaces].reverse()) ip(['netns', 'del', netns]);
    ip(['link', 'del', `pa${this.tag}r`]); // normally gone with the switch already
  }
}

/** Waits until `check` resolves true (bounded). */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await check()) return;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * HAProxy settings the suites use (and docs/deployment.md shows): round robin, no stickiness, no
 * buffering of SSE, a failed connect retried on the other node, dead nodes taken out by health
 * checks, and `X-Served-By` naming the node so a test knows where a request went.
 */
export function haproxyConfig(bind: string, servers: Array<{ name: string; address: string }>) {
  return [
    'global',
    '  maxconn 512',
    'defaults',
    '  mode http',
    '  option http-server-close',
    '  option redispatch',
    '  retries 2',
    '  timeout connect 2s',
    '  timeout client 5m',
    '  timeout server 5m',
    '  timeout http-keep-alive 5s',
    'frontend mcp',
    `  bind ${bind}`,
    '  default_backend nodes',
    'backend nodes',
    '  balance roundrobin',
    '  http-response set-header X-Served-By %s',
    ...servers.map((s) => `  server ${s.name} ${s.address} check inter 500 fall 2 rise 2`),
    '',
  ].join('\n');
}

export function writeTemp(name: string, text: string): string {
  const path = join(tmpdir(), `${name}-${randomBytes(4).toString('hex')}`);
  writeFileSync(path, text);
  return path;
}
