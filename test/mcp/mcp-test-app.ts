import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import type { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import {
  ParseAgentModule,
  ToolRegistry,
  type McpEndpointOptions,
  type ParseAgentModuleOptions,
} from 'nestjs-parse-agent';
import { PromptRegistry } from 'nestjs-parse-agent/mcp/prompt-registry';
import { testParseConnection } from '../harness/parse-rest';

export interface McpTestApp {
  app: INestApplication;
  /** http://127.0.0.1:<port> */
  base: string;
  /** The MCP endpoint URL. */
  url: string;
  tools: ToolRegistry;
  prompts: PromptRegistry;
  close(): Promise<void>;
}

export interface McpTestAppOptions {
  agentFactory?: ParseAgentModuleOptions['agentFactory'];
  mcp?: McpEndpointOptions;
  providers?: ModuleMetadata['providers'];
  /** The host's own controllers, beside the endpoint. */
  controllers?: ModuleMetadata['controllers'];
  host?: string;
  /** An Express adapter over the host's own express app (e.g. with parsers mounted first). */
  httpAdapter?: ExpressAdapter;
  globalPrefix?: string;
  /** Nest's HTTP platform (default express; `httpAdapter` wins when given). */
  platform?: 'express' | 'fastify';
  /** More module options (port options, redis...), applied over the suite defaults. */
  module?: Partial<ParseAgentModuleOptions>;
}

/** Boots a Nest app with ParseAgentModule and its MCP endpoint on a free loopback port. */
export async function startMcpTestApp(options: McpTestAppOptions = {}): Promise<McpTestApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ParseAgentModule.forRoot({
        parse: testParseConnection(),
        // Tool calls are many in these suites; rate limiting has its own tests elsewhere.
        rateLimiter: { check: () => undefined },
        suppressSecurityBanners: true,
        // Suites here use scratch classes without models; class exposure has its own tests.
        unregisteredClasses: 'visible',
        agentFactory: options.agentFactory ?? (() => ({ permissions: 'readonly' })),
        mcp: { maxConcurrentStreams: 50, ...options.mcp },
        ...options.module,
      }),
    ],
    providers: options.providers ?? [],
    controllers: options.controllers ?? [],
  }).compile();
  // Clients here (fetch) keep idle sockets open for seconds; close them with the app.
  const appOptions = { logger: false as const, forceCloseConnections: true };
  const adapter =
    options.httpAdapter ?? (options.platform === 'fastify' ? new FastifyAdapter() : undefined);
  const app = adapter
    ? moduleRef.createNestApplication(adapter, appOptions)
    : moduleRef.createNestApplication(appOptions);
  if (options.globalPrefix) app.setGlobalPrefix(options.globalPrefix);
  await app.listen(0, options.host ?? '127.0.0.1');
  const address = app.getHttpServer().address() as AddressInfo;
  const base = `http://127.0.0.1:${address.port}`;
  return {
    app,
    base,
    url: `${base}${options.globalPrefix ? `/${options.globalPrefix}` : ''}${options.mcp?.path ?? '/mcp'}`,
    tools: app.get(ToolRegistry),
    prompts: app.get(PromptRegistry),
    close: () => app.close(),
  };
}

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/** Splits an SSE body into events (and comment lines). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    if (!block.trim()) continue;
    const event: SseEvent = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) event.comment = line.slice(1).trim();
      else if (line.startsWith('event:')) event.event = line.slice(6).trim();
      else if (line.startsWith('id:')) event.id = line.slice(3).trim();
      else if (line.startsWith('data:')) event.data = (event.data ?? '') + line.slice(5).trim();
    }
    events.push(event);
  }
  return events;
}

/** A JSON-RPC message as these suites read it. */
export interface RpcMessage {
  jsonrpc: string;
  id?: string | number | null;
  method?: string;
  params?: { progressToken?: unknown; progress?: number; total?: number; message?: string };
  result?: {
    content?: Array<{ type: string; text: string }>;
    isError?: boolean;
    cancelled?: boolean;
    [key: string]: unknown;
  };
  error?: { code: number; message: string };
}

/** JSON-RPC messages of SSE events, in order. */
export function messagesOf(events: SseEvent[]): RpcMessage[] {
  return events.filter((e) => e.data).map((e) => JSON.parse(e.data!) as RpcMessage);
}

/** The progress values a tool reported itself (whole steps), leaving out heartbeats. */
export function progressOf(events: SseEvent[]): number[] {
  return messagesOf(events)
    .filter((m) => m.method === 'notifications/progress')
    .map((m) => m.params!.progress!)
    .filter((p) => Number.isInteger(p) && p >= 1);
}

/** JSON-RPC messages of an SSE body, in order. */
export function sseMessages(text: string): RpcMessage[] {
  return messagesOf(parseSse(text));
}

/**
 * A streaming POST read incrementally with fetch: `next()` resolves with each event as it arrives,
 * `abort()` drops the connection (a client disconnect).
 */
export async function openSsePost(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<{
  status: number;
  headers: Headers;
  next(): Promise<SseEvent | undefined>;
  rest(): Promise<SseEvent[]>;
  abort(): void;
}> {
  const controller = new AbortController();
  const res = await fetch(url, {
    method,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: method === 'GET' ? undefined : JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queue: SseEvent[] = [];
  let done = false;
  const next = async (): Promise<SseEvent | undefined> => {
    while (!queue.length && !done) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) {
        done = true;
        break;
      }
      buffer += decoder.decode(chunk.value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        queue.push(...parseSse(buffer.slice(0, cut + 2)));
        buffer = buffer.slice(cut + 2);
      }
    }
    return queue.shift();
  };
  return {
    status: res.status,
    headers: res.headers,
    next,
    rest: async () => {
      const all: SseEvent[] = [];
      for (let e = await next(); e; e = await next()) all.push(e);
      return all;
    },
    abort: () => controller.abort(),
  };
}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` passes (or fails with its last error after `timeoutMs`). */
export async function eventually(check: () => void, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() - started > timeoutMs) throw error;
      await delay(25);
    }
  }
}
