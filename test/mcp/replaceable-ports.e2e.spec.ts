import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  CancellationBus,
  DataPathProvider,
  EventStore,
  LlmProvider,
  ParseAgentModule,
  RateLimiter,
  SessionStore,
  type AgentIdentity,
  type PolicedToolContext,
} from 'nestjs-parse-agent';
import type { DataOperation, DataPath } from 'nestjs-parse-agent/data';
import type { LlmRequest, LlmResponse } from 'nestjs-parse-agent/llm';
import {
  InMemoryCancellationBus,
  InMemoryEventStore,
  InMemorySessionStore,
  type McpSession,
  type RequestId,
  type SessionCreateOptions,
  type StoredMessage,
} from 'nestjs-parse-agent/stores';
import { RedisCancellationBus, RedisEventStore, RedisSessionStore } from 'nestjs-parse-agent/redis';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createAgentTestBed } from '../harness/agent-module';
import { createObject } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';
import { redisReachable, runKeyPrefix, SHARED_REDIS_URL } from '../redis/redis-nodes';
import {
  eventually,
  messagesOf,
  openSsePost,
  sseMessages,
  startMcpTestApp,
  type McpTestApp,
} from './mcp-test-app';

/**
 * Every port token has a forRoot option, and the application's implementation is the one the
 * library uses: through the real MCP endpoint, the agents and the data router, with or without
 * Redis configured.
 */

const JSON_HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
};

@Injectable()
class RecordingSessionStore implements SessionStore {
  readonly created: McpSession[] = [];
  protected readonly inner = new InMemorySessionStore(60_000, 100);
  async create(owner: string, options?: SessionCreateOptions): Promise<McpSession> {
    const session = await this.inner.create(owner, options);
    this.created.push(session);
    return session;
  }
  get(id: string, owner: string) {
    return this.inner.get(id, owner);
  }
  delete(id: string) {
    return this.inner.delete(id);
  }
  clear() {
    return this.inner.clear();
  }
}

class RecordingCancellationBus implements CancellationBus {
  readonly registered: RequestId[] = [];
  readonly cancelled: RequestId[] = [];
  protected readonly inner = new InMemoryCancellationBus();
  register(scope: string, requestId: RequestId, controller: AbortController) {
    this.registered.push(requestId);
    return this.inner.register(scope, requestId, controller);
  }
  cancel(scope: string, requestId: RequestId, reason: string) {
    this.cancelled.push(requestId);
    return this.inner.cancel(scope, requestId, reason);
  }
}

class RecordingEventStore extends InMemoryEventStore {
  readonly stored: StoredMessage[] = [];
  override storeEvent(streamId: string, message: StoredMessage) {
    this.stored.push(message);
    return super.storeEvent(streamId, message);
  }
}

class RecordingRateLimiter implements RateLimiter {
  readonly keys: Array<string | undefined> = [];
  check(key?: string): void {
    this.keys.push(key);
  }
}

/** A data path of the application's own: answers every count with 42 and records who asked. */
class ProbeDataPathProvider implements DataPathProvider {
  readonly kind = 'probe';
  readonly asked: Array<[DataOperation, AgentIdentity['authType']]> = [];
  readonly bound: Array<AgentIdentity['authType']> = [];
  refusal(operation: DataOperation, identity: AgentIdentity): string | undefined {
    this.asked.push([operation, identity.authType]);
    return operation === 'write' ? 'the probe only reads' : undefined;
  }
  bind(identity: AgentIdentity): DataPath {
    this.bound.push(identity.authType);
    return {
      kind: this.kind,
      find: async () => [],
      get: async () => undefined,
      count: async () => 42,
    };
  }
}

class ScriptedLlm implements LlmProvider {
  readonly name = 'scripted';
  readonly model = 'scripted-1';
  readonly requests: LlmRequest[] = [];
  async complete(request: LlmRequest): Promise<LlmResponse> {
    this.requests.push(request);
    return {
      text: "the application's own model answered",
      toolCalls: [],
      usage: { inputTokens: 3, outputTokens: 5 },
      model: this.model,
    };
  }
}

function registerWaitTool(t: McpTestApp, started: { count: number }): void {
  t.tools.register({
    name: 'port_wait',
    description: 'Runs until its signal aborts (or 10 s pass).',
    handler: (_args, ctx: PolicedToolContext) =>
      new Promise((resolve) => {
        started.count++;
        const timer = setTimeout(() => resolve({ finished: true }), 10_000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve({ finished: false });
        });
      }),
  });
}

const initialize = (t: McpTestApp) =>
  request(t.app.getHttpServer())
    .post('/mcp')
    .set(JSON_HEADERS)
    .send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'ports', version: '1' },
      },
    });

const toolCall = (id: number, name: string, args: object = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('replaceable ports: the MCP endpoint uses the application’s stores', () => {
  const sessions = new RecordingSessionStore();
  const bus = new RecordingCancellationBus();
  const events = new RecordingEventStore();
  const limiter = new RecordingRateLimiter();
  const started = { count: 0 };
  let t: McpTestApp;

  beforeAll(async () => {
    t = await startMcpTestApp({
      mcp: { resumable: true },
      module: {
        sessionStore: sessions,
        cancellationBus: bus,
        eventStore: events,
        rateLimiter: limiter,
      },
    });
    registerWaitTool(t, started);
  });
  afterAll(() => t?.close());

  it('hands out the application’s instances under the port tokens', () => {
    expect(t.app.get(SessionStore)).toBe(sessions);
    expect(t.app.get(CancellationBus)).toBe(bus);
    expect(t.app.get(EventStore)).toBe(events);
    expect(t.app.get(RateLimiter)).toBe(limiter);
  });

  it('opens the session of an MCP initialize in the application’s SessionStore', async () => {
    const res = await initialize(t);
    expect(res.status).toBe(200);
    const id = res.headers['mcp-session-id'];
    expect(sessions.created.map((s) => s.id)).toContain(id);
  });

  it('registers calls with the application’s CancellationBus and cancels through it, keeping events in its EventStore', async () => {
    const { headers } = await initialize(t);
    const sessionId = headers['mcp-session-id'] as string;
    const storedBefore = events.stored.length;
    const stream = await openSsePost(t.url, toolCall(71, 'port_wait'), {
      'Mcp-Session-Id': sessionId,
    });
    expect(stream.status).toBe(200);
    await eventually(() => expect(started.count).toBe(1));
    expect(bus.registered).toContain(71);
    // A resumable stream's priming event went to the application's store.
    expect(events.stored.length).toBeGreaterThan(storedBefore);

    const cancel = await request(t.app.getHttpServer())
      .post('/mcp')
      .set(JSON_HEADERS)
      .set('Mcp-Session-Id', sessionId)
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 71 } });
    expect(cancel.status).toBe(202);
    const response = messagesOf(await stream.rest()).pop()!;
    expect(response.result?.cancelled).toBe(true);
    expect(bus.cancelled).toEqual([71]);
    // The tool call itself was counted by the application's limiter.
    expect(limiter.keys.length).toBeGreaterThan(0);
  });
});

describe('replaceable ports: the data router asks the application’s DataPathProvider', () => {
  const className = `PortProbe${randomBytes(4).toString('hex')}`;
  beforeAll(() => createObject(className, { n: 1 }));

  it('adds it to the library’s paths (function form): a scoped identity Parse REST refuses is served by it', async () => {
    const probe = new ProbeDataPathProvider();
    const t = await startMcpTestApp({
      agentFactory: (req) =>
        req.headers['x-acl-user'] ? { aclUser: 'u-probe' } : { permissions: 'readonly' },
      module: { dataPathProviders: (paths) => [...paths, probe] },
    });
    try {
      // The library's paths (Parse REST, and the ACL-scoped write path of aclUser/aclRole agents),
      // then the application's.
      expect(t.app.get(DataPathProvider).map((p: DataPathProvider) => p.kind)).toEqual([
        'parse-rest',
        'acl-scoped-write',
        'probe',
      ]);
      const scoped = await request(t.app.getHttpServer())
        .post('/mcp')
        .set(JSON_HEADERS)
        .set('X-Acl-User', '1')
        .send(toolCall(1, 'count_objects', { class_name: className }));
      expect(sseMessages(scoped.text).pop()?.result?.structuredContent).toMatchObject({
        count: 42,
      });
      expect(probe.bound).toEqual(['acl_user']);

      // The master key's row reads still go to Parse REST, which ranks first for them.
      const master = await request(t.app.getHttpServer())
        .post('/mcp')
        .set(JSON_HEADERS)
        .send(toolCall(2, 'count_objects', { class_name: className }));
      expect(sseMessages(master.text).pop()?.result?.structuredContent).toMatchObject({
        count: 1,
      });
      expect(probe.bound).toEqual(['acl_user']);
    } finally {
      await t.close();
    }
  });

  it('replaces the library’s paths (list form): even the master key’s count is answered by it', async () => {
    const probe = new ProbeDataPathProvider();
    const bed = await createAgentTestBed([], {
      unregisteredClasses: 'visible',
      dataPathProviders: [probe],
    });
    try {
      expect(bed.module.get(DataPathProvider)).toEqual([probe]);
      const result = await bed.factory.create().execute('count_objects', { class_name: className });
      expect(result).toMatchObject({ success: true, data: { count: 42 } });
      expect(probe.bound).toEqual(['master_key']);
    } finally {
      await bed.close();
    }
  });
});

describe('replaceable ports: agent.ask() talks to the application’s LlmProvider', () => {
  it('answers through llmProvider, also under the LlmProvider token', async () => {
    const llm = new ScriptedLlm();
    const bed = await createAgentTestBed([], { llmProvider: llm });
    try {
      expect(bed.module.get(LlmProvider)).toBe(llm);
      expect(bed.factory.conversationsEnabled).toBe(true);
      const answer = await bed.factory.create().ask('Who answers?');
      expect(answer.text).toBe("the application's own model answered");
      expect(llm.requests).toHaveLength(1);
      expect(JSON.stringify(llm.requests[0].messages)).toContain('Who answers?');
    } finally {
      await bed.close();
    }
  });
});

describe('replaceable ports: an application’s Nest provider, through forRootAsync', () => {
  @Module({ providers: [RecordingSessionStore], exports: [RecordingSessionStore] })
  class AppStoresModule {}

  it('uses the store the application’s own module provides', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRootAsync({
          imports: [AppStoresModule],
          inject: [RecordingSessionStore],
          useFactory: (store: RecordingSessionStore) => ({
            parse: testParseConnection(),
            suppressSecurityBanners: true,
            agentFactory: () => ({ permissions: 'readonly' }),
            sessionStore: store,
          }),
          mcp: {},
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const store = app.get(RecordingSessionStore);
      expect(app.get(SessionStore)).toBe(store);
      const res = await request(app.getHttpServer())
        .post('/mcp')
        .set(JSON_HEADERS)
        .send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} });
      expect(store.created.map((s) => s.id)).toEqual([res.headers['mcp-session-id']]);
    } finally {
      await app.close();
    }
  });
});

describe('replaceable ports: wrong or conflicting options fail the boot, naming the fix', () => {
  const boot = (extra: object) =>
    Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          suppressSecurityBanners: true,
          ...extra,
        }),
      ],
    }).compile();

  it('refuses llm and llmProvider together', async () => {
    await expect(
      boot({ llmProvider: new ScriptedLlm(), llm: { provider: 'openai' } }),
    ).rejects.toThrow(/llmProvider .* or llm, not both/);
  });

  it('refuses a replacing data path list next to postgres, which it would ignore', async () => {
    await expect(
      boot({
        dataPathProviders: [new ProbeDataPathProvider()],
        postgres: { uri: 'postgres://nobody@127.0.0.1:1/none' },
      }),
    ).rejects.toThrow(/would be ignored.*dataPathProviders: \(paths\) =>/);
  });

  it('refuses an object that is not a SessionStore', async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          ParseAgentModule.forRoot({
            parse: testParseConnection(),
            suppressSecurityBanners: true,
            agentFactory: () => ({}),
            sessionStore: {} as SessionStore,
            mcp: {},
          }),
        ],
      }).compile(),
    ).rejects.toThrow(/sessionStore must be a SessionStore/);
  });
});

const redisUp = redisReachable(SHARED_REDIS_URL);
if (!redisUp) console.warn(`SKIPPED ports-over-redis suite: no Redis at ${SHARED_REDIS_URL}.`);
const describeWithRedis = redisUp ? describe : describe.skip;

describeWithRedis('replaceable ports: an explicit option beats `redis`', () => {
  it('uses Redis for every port left out, and the application’s store for every port given', async () => {
    const redis = { url: SHARED_REDIS_URL, keyPrefix: runKeyPrefix('ports') };
    const defaults = await startMcpTestApp({ mcp: { resumable: true }, module: { redis } });
    try {
      expect(defaults.app.get(SessionStore)).toBeInstanceOf(RedisSessionStore);
      expect(defaults.app.get(CancellationBus)).toBeInstanceOf(RedisCancellationBus);
      expect(defaults.app.get(EventStore)).toBeInstanceOf(RedisEventStore);
    } finally {
      await defaults.close();
    }

    const sessions = new RecordingSessionStore();
    const bus = new RecordingCancellationBus();
    const events = new RecordingEventStore();
    const limiter = new RecordingRateLimiter();
    const t = await startMcpTestApp({
      mcp: { resumable: true },
      module: {
        redis,
        sessionStore: sessions,
        cancellationBus: bus,
        eventStore: events,
        rateLimiter: limiter,
      },
    });
    try {
      expect(t.app.get(SessionStore)).toBe(sessions);
      expect(t.app.get(CancellationBus)).toBe(bus);
      expect(t.app.get(EventStore)).toBe(events);
      expect(t.app.get(RateLimiter)).toBe(limiter);
      const res = await initialize(t);
      expect(sessions.created.map((s) => s.id)).toEqual([res.headers['mcp-session-id']]);
      const called = await request(t.app.getHttpServer())
        .post('/mcp')
        .set(JSON_HEADERS)
        .set('Mcp-Session-Id', res.headers['mcp-session-id'] as string)
        .send(toolCall(5, 'list_tools'));
      expect(sseMessages(called.text).pop()?.result?.isError).toBe(false);
      expect(limiter.keys.length).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });
});
