import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  AgentUnauthorizedError,
  ParseAgentModule,
  ToolRegistry,
  type McpEndpointOptions,
  type ParseAgentModuleOptions,
  type PolicedToolContext,
} from 'nestjs-parse-agent';
import { PromptRegistry } from 'nestjs-parse-agent/mcp/prompt-registry';
import { findFreePort } from '../../src/embedded/free-port';
import { testParseConnection } from '../harness/parse-rest';
import { delay, openSsePost, progressOf, type SseEvent } from '../mcp/mcp-test-app';

/** The Redis the suites share: TEST_REDIS_URL, else the service on these machines. */
export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix unique to this test run, so runs (and suites) never see each other's keys. */
export function runKeyPrefix(label: string): string {
  return `parse-agent-test:${label}:${randomBytes(6).toString('hex')}:`;
}

/** Whether a TCP connection to the URL's host and port opens (checked synchronously, at load). */
export function redisReachable(url: string): boolean {
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

/** Whether a redis-server binary is on PATH (for the suites that start and stop their own). */
export function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { timeout: 3000 }).status === 0;
}

/** A redis-server this suite owns (so stopping it never touches the shared service). */
export interface OwnRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await findFreePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await waitForPort(port, true);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
    await waitForPort(port, false);
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, start, stop };
}

async function waitForPort(port: number, open: boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
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

export interface RedisNode {
  app: INestApplication;
  url: string;
  tools: ToolRegistry;
  prompts: PromptRegistry;
  close(): Promise<void>;
}

/** `Authorization: Bearer <token>` becomes a session-token agent; no token is refused. */
export const bearerAgentFactory: ParseAgentModuleOptions['agentFactory'] = (req) => {
  const match = /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''));
  if (!match) throw new AgentUnauthorizedError('missing bearer token', { reason: 'no_token' });
  return { sessionToken: match[1] };
};

/** The bearer token itself as the user key (for made-up tokens). */
export const bearerTokenUserKey: NonNullable<McpEndpointOptions['userKey']> = (req) =>
  /^Bearer (\S+)$/.exec(String(req.headers.authorization ?? ''))?.[1];

/** One Nest node with the MCP endpoint on the given Redis (its default, shared rate limiter). */
export async function startRedisNode(options: {
  redisUrl: string;
  keyPrefix: string;
  /** Startup nodes of a Redis Cluster: used instead of `redisUrl` when given. */
  redisCluster?: string[];
  parse?: ParseAgentModuleOptions['parse'];
  mcp?: McpEndpointOptions;
  /** Address and port to listen on (default 127.0.0.1, any free port). */
  host?: string;
  port?: number;
}): Promise<RedisNode> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ParseAgentModule.forRoot({
        parse: options.parse ?? testParseConnection(),
        redis: options.redisCluster
          ? { cluster: options.redisCluster, keyPrefix: options.keyPrefix }
          : { url: options.redisUrl, keyPrefix: options.keyPrefix },
        suppressSecurityBanners: true,
        // The application tools read scratch classes no model declares, through context.read.
        unregisteredClasses: 'visible',
        agentFactory: bearerAgentFactory,
        mcp: {
          maxConcurrentStreams: 50,
          heartbeatIntervalMs: 1000,
          // The suites' tokens are made up (Parse does not know them): each counts as its own
          // user. Pass `userKey: undefined` to resolve real tokens through Parse instead.
          userKey: bearerTokenUserKey,
          ...options.mcp,
        },
      }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
  const host = options.host ?? '127.0.0.1';
  await app.listen(options.port ?? 0, host);
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    url: `http://${host}:${port}/mcp`,
    tools: app.get(ToolRegistry),
    prompts: app.get(PromptRegistry),
    close: () => app.close(),
  };
}

/** An HTTP proxy sending each request to the next node in turn (no stickiness at all). */
export interface RoundRobinProxy {
  url: string;
  /** Requests sent to each node, by index. */
  served: number[];
  close(): Promise<void>;
}

export async function startRoundRobinProxy(
  targets: string[],
  options: {
    /** Drops the first streamed tools/call response after this many SSE events with an id. */
    cutCallStreamAfterEvents?: number;
  } = {},
): Promise<RoundRobinProxy> {
  const served = targets.map(() => 0);
  let next = 0;
  let cutPending = options.cutCallStreamAfterEvents !== undefined;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const index = next++ % targets.length;
    served[index]++;
    const target = new URL(targets[index]);
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        const streamed = String(answer.headers['content-type']).includes('text/event-stream');
        if (cutPending && req.method === 'POST' && streamed) {
          cutPending = false;
          let ids = 0;
          answer.on('data', (chunk: Buffer) => {
            if (res.destroyed) return;
            res.write(chunk);
            ids += (chunk.toString().match(/^id: /gm) ?? []).length;
            // A network failure mid-call: both sides of the proxy go away.
            if (ids >= options.cutCallStreamAfterEvents!) {
              res.destroy();
              upstream.destroy();
            }
          });
          return;
        }
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${new URL(targets[0]).pathname}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A proxy in front of Parse Server that holds requests whose path contains `holdPath` until the
 * caller goes away, and records that it did (the Parse request was aborted, not just ignored).
 */
export interface HoldingParseProxy {
  serverURL: string;
  held: number;
  aborted: number;
  close(): Promise<void>;
}

export async function startHoldingParseProxy(
  parseServerURL: string,
  holdPath: string,
): Promise<HoldingParseProxy> {
  const upstreamURL = new URL(parseServerURL);
  const state = { held: 0, aborted: 0 };
  const server = createServer((req, res) => {
    if ((req.url ?? '').includes(holdPath)) {
      state.held++;
      req.resume();
      res.on('close', () => {
        if (!res.writableEnded) state.aborted++;
      });
      return; // never answered: only the caller's abort ends it
    }
    const upstream = httpRequest(
      {
        host: upstreamURL.hostname,
        port: upstreamURL.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstreamURL.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    serverURL: `http://127.0.0.1:${port}${upstreamURL.pathname}`,
    get held() {
      return state.held;
    },
    get aborted() {
      return state.aborted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** POSTs one JSON-RPC message and returns status, headers and the parsed JSON body (if any). */
export async function rpc(
  url: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> | undefined }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}

export const initializeBody = (
  id: number | string = 1,
  options: { elicitation?: boolean; client?: string } = {},
) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: options.elicitation ? { elicitation: {} } : {},
    clientInfo: { name: options.client ?? 'redis-suite', version: '1.0.0' },
  },
});

/**
 * Initializes a session at `url` as the bearer `token` (declaring elicitation when asked) and
 * returns the headers its later requests carry. Fails unless initialize answered 200.
 */
export async function openSession(
  url: string,
  token: string,
  options: { elicitation?: boolean; client?: string } = {},
): Promise<Record<string, string>> {
  const auth = { Authorization: `Bearer ${token}` };
  const init = await rpc(url, initializeBody(1, options), auth);
  if (init.status !== 200) throw new Error(`initialize answered ${init.status}`);
  return {
    ...auth,
    'Mcp-Session-Id': init.headers.get('mcp-session-id')!,
    'MCP-Protocol-Version': '2025-11-25',
  };
}

export const callBody = (
  id: number | string,
  name: string,
  args: Record<string, unknown> = {},
) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

/** A node in a child process (test/redis/node-process.ts), so a suite can SIGKILL it. */
export interface NodeProcess {
  url: string;
  child: ChildProcess;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

export async function startNodeProcess(options: {
  redisUrl: string;
  keyPrefix: string;
  /** Startup nodes of a Redis Cluster: used instead of `redisUrl` when given. */
  redisCluster?: string[];
  mcp?: Record<string, unknown>;
  /** Listen address and port inside the process (default 127.0.0.1, any free port). */
  host?: string;
  port?: number;
  /** Runs the process in this network namespace (`ip netns exec`). */
  netns?: string;
}): Promise<NodeProcess> {
  return startChildNode({
    script: join(__dirname, 'node-process.ts'),
    env: {
      REDIS_URL: options.redisUrl,
      REDIS_CLUSTER: options.redisCluster ? JSON.stringify(options.redisCluster) : '',
      KEY_PREFIX: options.keyPrefix,
      MCP_OPTIONS: JSON.stringify(options.mcp ?? {}),
      LISTEN_HOST: options.host ?? '127.0.0.1',
      LISTEN_PORT: String(options.port ?? 0),
    },
    netns: options.netns,
  });
}

/**
 * Runs a TypeScript `script` in a child Node process with `env` added to this one's, and waits
 * for its `LISTENING <url>` line (on stdout or stderr).
 */
export async function startChildNode(options: {
  script: string;
  env: Record<string, string>;
  /** Runs the process in this network namespace (`ip netns exec`). */
  netns?: string;
  /** How errors name the process (default `node process`). */
  label?: string;
  /** How long it may take to listen (default 60 s). */
  startMs?: number;
}): Promise<NodeProcess> {
  const label = options.label ?? 'node process';
  const startMs = options.startMs ?? 60_000;
  const root = join(__dirname, '..', '..');
  const node = [process.execPath, '-r', join(root, 'test/harness/ts-register.js'), options.script];
  const [command, ...args] = options.netns ? ['ip', 'netns', 'exec', options.netns, ...node] : node;
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...options.env },
    // stdin stays open while this process lives: its end stops the child.
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not start within ${startMs / 1000} s:\n${output}`));
    }, startMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /LISTENING (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`${label} exited before listening:\n${output}`));
    });
  });
  return {
    url,
    child,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** What a client saw of a streaming call whose node was killed under it, and of its resume. */
export interface KilledMidStream {
  /** Events read from the dying node before the client dropped its stream. */
  before: SseEvent[];
  /** Everything the resume on the other node sent, to the end of its stream. */
  after: SseEvent[];
  lastEventId: string;
  /** From the resume's request to its stream's end. */
  elapsedMs: number;
}

/**
 * Starts `endless_steps` (request id 41, progress token p41) on `dying` with the session's
 * `headers`, reads two steps, drops the stream, lets `dying` store a few more steps nobody saw,
 * SIGKILLs it, then resumes with `Last-Event-ID` on `other` and reads to the end.
 */
export async function killMidStreamAndResume(
  dying: NodeProcess,
  other: { url: string },
  headers: Record<string, string>,
): Promise<KilledMidStream> {
  const call = await openSsePost(
    dying.url,
    {
      jsonrpc: '2.0',
      id: 41,
      method: 'tools/call',
      params: { name: 'endless_steps', arguments: {}, _meta: { progressToken: 'p41' } },
    },
    headers,
  );
  if (call.status !== 200) throw new Error(`the call answered ${call.status}`);
  const before: SseEvent[] = [];
  for (let event = await call.next(); event; event = await call.next()) {
    before.push(event);
    if (progressOf(before).length === 2) break;
  }
  call.abort();
  const lastEventId = [...before].reverse().find((e) => e.id)!.id!;
  await delay(250);
  await dying.kill();

  const started = Date.now();
  const resumed = await openSsePost(
    other.url,
    undefined,
    { ...headers, 'Last-Event-ID': lastEventId },
    'GET',
  );
  if (resumed.status !== 200) throw new Error(`the resume answered ${resumed.status}`);
  const after = await resumed.rest(); // ends by itself
  return { before, after, lastEventId, elapsedMs: Date.now() - started };
}

/** A streaming call's length in the resume suites: `STEPS` progress steps, one every `STEP_MS`. */
export const STEPS = 6;
export const STEP_MS = 150;

/**
 * Registers `name` on `node`: reports progress STEPS times, a step every STEP_MS, then answers
 * `{ steps: STEPS }` (no Parse request); counts its runs and the runs its signal aborted.
 */
export function registerSteppingTool(
  node: Pick<RedisNode, 'tools'>,
  name: string,
  runs: { started: number; aborted: number },
): void {
  node.tools.register({
    name,
    description: 'Reports progress step by step, then answers (no Parse request).',
    clientSafe: true,
    handler: async (_args, ctx: PolicedToolContext) => {
      runs.started++;
      for (let step = 1; step <= STEPS; step++) {
        await delay(STEP_MS);
        if (ctx.signal?.aborted) {
          runs.aborted++;
          throw new Error('aborted');
        }
        ctx.reportProgress({ progress: step, total: STEPS, message: `step ${step}` });
      }
      return { steps: STEPS };
    },
  });
}
