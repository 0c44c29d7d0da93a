import 'reflect-metadata';
import { lastValueFrom, toArray } from 'rxjs';
import { createObject, createObjects, createUser, defineClass } from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';
import { AgentEvents } from '../../libs/parse-agent/src/core/agent-events';
import {
  AgentUnauthorizedError,
  RateLimitExceededError,
  RateLimiterUnavailableError,
} from '../../libs/parse-agent/src/core/errors';
import { ParseAgent, type AgentOptions } from '../../libs/parse-agent/src/agent/parse-agent';
import { SlidingWindowRateLimiter } from '../../libs/parse-agent/src/ports/in-memory-rate-limiter';
import { suppressSecurityBanners } from '../../libs/parse-agent/src/core/security-banner';
import { ParseRestClient } from '../../libs/parse-agent/src/data/parse-rest/parse-rest-client';
import { SchemaCache } from '../../libs/parse-agent/src/data/schema-cache';
import { DataRouter } from '../../libs/parse-agent/src/data/data-router';
import { ParseRestDataPathProvider } from '../../libs/parse-agent/src/data/parse-rest/parse-rest-data-path';
import { MAX_TOOL_RESPONSE_BYTES } from '../../libs/parse-agent/src/format/response-size-cap';
import { MetadataRegistry } from '../../libs/parse-agent/src/metadata/metadata-registry';
import { BUILTIN_TOOLS } from '../../libs/parse-agent/src/tools/builtin';
import { ToolRegistry } from '../../libs/parse-agent/src/tools/tool-registry';
import { BUILTIN_PROMPTS } from '../../libs/parse-agent/src/mcp/builtin-prompts';
import { McpDispatcher } from '../../libs/parse-agent/src/mcp/mcp-dispatcher';
import type {
  DispatchContext,
  DispatchMessage,
  JsonRpcResponse,
} from '../../libs/parse-agent/src/mcp/mcp-dispatcher.types';
import { PromptRegistry } from '../../libs/parse-agent/src/mcp/prompt-registry';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../libs/parse-agent/src/mcp/protocol.constants';
import {
  unwrapUntrusted,
  type CallToolResult,
} from '../../libs/parse-agent/src/mcp/tool-call-result';

suppressSecurityBanners();

const cfg = testParseConfig();
const parse = new ParseRestClient(cfg);
const tools = new ToolRegistry(BUILTIN_TOOLS);
const services = {
  data: new DataRouter([new ParseRestDataPathProvider(parse)]),
  schemas: new SchemaCache(parse),
  metadata: new MetadataRegistry({ unregisteredClasses: 'visible' }),
  tools,
  events: new AgentEvents(),
  rateLimiter: new SlidingWindowRateLimiter(100_000, 60),
  warn: () => undefined,
};
const prompts = new PromptRegistry(BUILTIN_PROMPTS);
const dispatcher = new McpDispatcher(tools, prompts);
const makeAgent = (options: AgentOptions = {}) => new ParseAgent(options, services);
const master = makeAgent();

/** Every message of one dispatch, in order. */
function messagesOf(
  body: unknown,
  agent: ParseAgent = master,
  context?: DispatchContext,
  using: McpDispatcher = dispatcher,
): Promise<DispatchMessage[]> {
  return lastValueFrom(using.dispatch(body, agent, context).pipe(toArray()));
}

/** The terminal response of one dispatch (fails the test if it was `accepted`). */
async function respond(
  body: unknown,
  agent: ParseAgent = master,
  context?: DispatchContext,
  using: McpDispatcher = dispatcher,
): Promise<{ status: number; message: JsonRpcResponse }> {
  const messages = await messagesOf(body, agent, context, using);
  const last = messages[messages.length - 1];
  if (last.kind !== 'response') throw new Error(`expected a response, got ${last.kind}`);
  return last;
}

async function resultOf<T = Record<string, unknown>>(
  body: unknown,
  agent?: ParseAgent,
  context?: DispatchContext,
  using?: McpDispatcher,
): Promise<T> {
  const { status, message } = await respond(body, agent, context, using);
  expect(status).toBe(200);
  expect(message.error).toBeUndefined();
  return message.result as T;
}

const request = (method: string, params?: Record<string, unknown>, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});
const callTool = (name: unknown, args?: unknown, extra: Record<string, unknown> = {}) =>
  request('tools/call', { name, ...(args === undefined ? {} : { arguments: args }), ...extra });

// Registered tools exercising the dispatcher's paths.
const slow = {
  started: Promise.resolve(),
  markStarted: () => undefined as void,
  aborted: false,
};
tools.register({
  name: 'mcp_summary',
  description: 'Summary with a declared output schema.',
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  outputSchema: {
    type: 'object',
    properties: { id: { type: 'string' }, title: { type: 'string' } },
    required: ['id', 'title'],
  },
  handler: (args: { id: string }) => ({ id: args.id, title: `Record ${args.id}` }),
});
tools.register({
  name: 'mcp_plain',
  description: 'Returns a plain object without an output schema.',
  category: 'Reporting',
  handler: () => ({ ok: true }),
});
tools.register({
  name: 'mcp_slow',
  description: 'Waits until cancelled.',
  handler: (_args, context) =>
    new Promise((_resolve, reject) => {
      slow.markStarted();
      context.signal.addEventListener('abort', () => {
        slow.aborted = true;
        reject(context.signal.reason);
      });
    }),
});
tools.register({
  name: 'mcp_progress',
  description: 'Reports progress twice.',
  handler: async (_args, context) => {
    context.reportProgress({ progress: 1, total: 2, message: 'half way' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    context.reportProgress({ progress: 2 });
    return { done: true };
  },
});
tools.register({
  name: 'mcp_huge',
  description: 'Returns more than the response cap.',
  outputSchema: { type: 'object' },
  handler: () => ({
    results: [
      { objectId: 'a1', note: 'short', blob: 'z'.repeat(MAX_TOOL_RESPONSE_BYTES / 2) },
      { objectId: 'a2', note: 'short', blob: 'z'.repeat(MAX_TOOL_RESPONSE_BYTES / 2) },
    ],
  }),
});
tools.register({
  name: 'mcp_refuse_identity',
  description: 'Refuses its caller.',
  handler: () => {
    throw new AgentUnauthorizedError('token expired for user 42', { reason: 'expired' });
  },
});
tools.register({
  name: 'mcp_admin_only',
  description: 'Needs admin.',
  permission: 'admin',
  handler: () => ({ ok: true }),
});

function resetSlow(): void {
  slow.aborted = false;
  slow.started = new Promise<void>((resolve) => {
    slow.markStarted = resolve;
  });
}

describe('McpDispatcher', () => {
  let alice: ParseAgent;
  let bob: ParseAgent;

  beforeAll(async () => {
    await defineClass('McpDispNote', { title: { type: 'String' } });
    await defineClass('McpDispPost', { title: { type: 'String' }, body: { type: 'String' } });
    const aliceUser = await createUser(`mcp_disp_alice_${Date.now()}`);
    const bobUser = await createUser(`mcp_disp_bob_${Date.now()}`);
    await createObject('McpDispNote', { title: 'public one' });
    await createObject('McpDispNote', { title: 'public two' });
    await createObject(
      'McpDispNote',
      { title: 'alice only' },
      { [aliceUser.objectId]: { read: true, write: true } },
    );
    await createObjects(
      'McpDispPost',
      Array.from({ length: 12 }, (_, i) => ({ title: `Post ${i}`, body: 'p'.repeat(1500) })),
    );
    alice = makeAgent({ sessionToken: aliceUser.sessionToken });
    bob = makeAgent({ sessionToken: bobUser.sessionToken });
  });

  describe('initialize and ping', () => {
    it.each(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < '2026'))(
      'echoes the requested version %s',
      async (v) => {
        const result = await resultOf(request('initialize', { protocolVersion: v }));
        expect(result.protocolVersion).toBe(v);
      },
    );

    it.each([
      ['an unknown version', { protocolVersion: '1999-01-01' }],
      ['a non-string version', { protocolVersion: 7 }],
      ['no params', undefined],
    ])(
      'answers 2025-06-18 for %s, with capabilities, server info and instructions',
      async (_l, params) => {
        const result = await resultOf(request('initialize', params));
        expect(result).toEqual({
          instructions: expect.stringContaining('next_call'),
          protocolVersion: '2025-06-18',
          capabilities: {
            tools: { listChanged: true },
            resources: { subscribe: false, listChanged: false },
            prompts: { listChanged: true },
          },
          serverInfo: { name: 'nestjs-parse-agent', version: expect.any(String) },
        });
      },
    );

    it('reports the configured server info', async () => {
      const custom = new McpDispatcher(tools, prompts, {
        serverInfo: { name: 'acme-data', version: '9.9.9' },
      });
      const result = await resultOf(request('initialize'), master, undefined, custom);
      expect(result.serverInfo).toEqual({ name: 'acme-data', version: '9.9.9' });
    });

    it('passes on the 2025-11-25 Implementation fields (title, description, websiteUrl, icons)', async () => {
      const icons = [
        { src: 'https://acme.example/icon.png', mimeType: 'image/png', sizes: ['48x48'] },
      ];
      const custom = new McpDispatcher(tools, prompts, {
        serverInfo: {
          name: 'acme-data',
          version: '9.9.9',
          title: 'Acme data',
          description: 'Acme orders and customers',
          websiteUrl: 'https://acme.example',
          icons,
        },
      });
      const result = await resultOf(
        request('initialize', { protocolVersion: '2025-11-25', capabilities: {} }),
        master,
        undefined,
        custom,
      );
      expect(result.protocolVersion).toBe('2025-11-25');
      expect(result.serverInfo).toEqual({
        name: 'acme-data',
        version: '9.9.9',
        title: 'Acme data',
        description: 'Acme orders and customers',
        websiteUrl: 'https://acme.example',
        icons,
      });
    });

    it('answers ping with an empty result and echoes the id', async () => {
      const { status, message } = await respond(request('ping', undefined, 'req-7'));
      expect(status).toBe(200);
      expect(message).toEqual({ jsonrpc: '2.0', id: 'req-7', result: {} });
    });

    it('refuses bad construction options with a fix-it message', () => {
      expect(() => new McpDispatcher(tools, prompts, { maxResponseBytes: 0 })).toThrow(
        /maxResponseBytes must be a positive integer/,
      );
    });
  });

  describe('tools/list', () => {
    it("gives a tool's title and icons (2025-11-25) only when it has them", async () => {
      const own = new ToolRegistry(BUILTIN_TOOLS);
      own.register({
        name: 'titled_tool',
        title: 'Titled tool',
        icons: [{ src: 'data:image/svg+xml;base64,PHN2Zy8+', mimeType: 'image/svg+xml' }],
        description: 'Has a title and an icon.',
        handler: () => ({}),
      });
      own.register({
        name: 'annotated_tool',
        description: 'Title from its annotations.',
        annotations: { title: 'Annotated tool' },
        handler: () => ({}),
      });
      const agent = new ParseAgent({}, { ...services, tools: own });
      const { tools: listed } = await resultOf<{ tools: Array<Record<string, unknown>> }>(
        request('tools/list'),
        agent,
        undefined,
        new McpDispatcher(own, prompts),
      );
      const titled = listed.find((t) => t.name === 'titled_tool')!;
      expect(titled.title).toBe('Titled tool');
      expect(titled.icons).toEqual([
        { src: 'data:image/svg+xml;base64,PHN2Zy8+', mimeType: 'image/svg+xml' },
      ]);
      expect(listed.find((t) => t.name === 'annotated_tool')!.title).toBe('Annotated tool');
      const query = listed.find((t) => t.name === 'query_class')!;
      expect(query).not.toHaveProperty('icons');
    });

    it('lists the allowed tools with their category and no internals', async () => {
      const { tools: listed } = await resultOf<{ tools: Array<Record<string, unknown>> }>(
        request('tools/list'),
      );
      const names = listed.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['query_class', 'get_schema', 'mcp_summary']));
      expect(names).not.toContain('mcp_admin_only');
      for (const tool of listed) {
        expect(Object.keys(tool).filter((k) => k !== 'outputSchema')).toEqual([
          'name',
          'description',
          'inputSchema',
          'annotations',
          '_meta',
        ]);
        expect(typeof (tool._meta as { category: unknown }).category).toBe('string');
        // Every tool, built-in or registered, says whether it changes data.
        expect(typeof (tool.annotations as { readOnlyHint: unknown }).readOnlyHint).toBe('boolean');
      }
      const query = listed.find((t) => t.name === 'query_class')!;
      expect(query._meta).toEqual({ category: 'query' });
      expect(query.outputSchema).toMatchObject({ type: 'object' });
      for (const tool of listed) {
        if (tool.name !== 'mcp_plain' && !String(tool.name).startsWith('mcp_')) {
          expect(tool.outputSchema).toMatchObject({ type: 'object' });
        }
      }
      const summary = listed.find((t) => t.name === 'mcp_summary')!;
      expect(summary._meta).toEqual({ category: 'custom' });
      expect(summary.outputSchema).toMatchObject({ required: ['id', 'title'] });
    });

    it('narrows by category case-insensitively, and an unknown category is empty', async () => {
      const schema = await resultOf<{ tools: Array<{ name: string }> }>(
        request('tools/list', { category: 'SCHEMA' }),
      );
      expect(schema.tools.map((t) => t.name).sort()).toEqual(['get_all_schemas', 'get_schema']);
      const reporting = await resultOf<{ tools: Array<{ name: string }> }>(
        request('tools/list', { category: 'reporting' }),
      );
      expect(reporting.tools.map((t) => t.name)).toEqual(['mcp_plain']);
      expect(await resultOf(request('tools/list', { category: 'nope' }))).toEqual({ tools: [] });
    });

    it('never widens past the agent: an admin tool stays out of a readonly category list', async () => {
      const custom = await resultOf<{ tools: Array<{ name: string }> }>(
        request('tools/list', { category: 'custom' }),
      );
      expect(custom.tools.map((t) => t.name)).not.toContain('mcp_admin_only');
      const admin = makeAgent({ permissions: 'admin' });
      const forAdmin = await resultOf<{ tools: Array<{ name: string }> }>(
        request('tools/list', { category: 'custom' }),
        admin,
      );
      expect(forAdmin.tools.map((t) => t.name)).toContain('mcp_admin_only');
    });
  });

  describe('tools/call', () => {
    it('returns the tool data as JSON text', async () => {
      const result = await resultOf<CallToolResult>(
        callTool('count_objects', {
          class_name: 'McpDispNote',
          where: { title: { $exists: true } },
        }),
      );
      expect(result.isError).toBe(false);
      // Compact text (no indentation); the same data as structuredContent.
      expect(JSON.parse(unwrapUntrusted(result.content[0].text))).toMatchObject({ count: 3 });
      expect(unwrapUntrusted(result.content[0].text)).not.toContain('\n');
      expect(result.structuredContent).toMatchObject({ count: 3 });
    });

    it('runs as the agent: a user never counts a row her ACL hides', async () => {
      const count = async (agent: ParseAgent) => {
        const result = await resultOf<CallToolResult>(
          callTool('count_objects', { class_name: 'McpDispNote' }),
          agent,
        );
        return (JSON.parse(unwrapUntrusted(result.content[0].text)) as { count: number }).count;
      };
      expect(await count(alice)).toBe(3);
      expect(await count(bob)).toBe(2);
    });

    it('reports tool failures as isError results with the error code in _meta', async () => {
      const result = await resultOf<CallToolResult>(
        callTool('query_class', { class_name: 'McpDispNote', where: { title: { $where: 'x' } } }),
      );
      expect(result.isError).toBe(true);
      expect(result._meta?.['parse.error_code']).toEqual(expect.any(String));
      expect(result.content[0].text.length).toBeGreaterThan(0);

      const denied = await resultOf<CallToolResult>(callTool('mcp_admin_only'));
      expect(denied).toEqual({
        content: [
          {
            type: 'text',
            text: "Permission denied: 'mcp_admin_only' requires admin permissions. Current level: readonly",
          },
        ],
        isError: true,
        _meta: { 'parse.error_code': 'permission_denied' },
        structuredContent: {
          error:
            "Permission denied: 'mcp_admin_only' requires admin permissions. Current level: readonly",
          error_code: 'permission_denied',
        },
      });
    });

    it('answers an unknown tool with -32602, not a permission failure', async () => {
      const { status, message } = await respond(callTool('no_such_tool', {}));
      expect(status).toBe(200);
      expect(message).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32602,
          message:
            "Unknown tool 'no_such_tool': no tool of that name is available to this agent. list_tools (tools/list over MCP) names the tools it may call.",
        },
      });
    });

    it('suggests close names for an unknown tool, only among the tools the agent may call', async () => {
      const typo = await respond(callTool('count_object', {}));
      const text = (typo.message as { error: { message: string } }).error.message;
      expect(text).toMatch(/^Unknown tool 'count_object'.* Did you mean count_objects/);
      // A readonly agent is not told about the admin tool it may not call.
      const hidden = await respond(callTool('delete_objekt', {}));
      expect(JSON.stringify(hidden.message)).not.toContain('delete_object');
      const admin = await respond(
        callTool('delete_objekt', {}),
        makeAgent({ permissions: 'admin' }),
      );
      expect(JSON.stringify(admin.message)).toContain('Did you mean delete_object?');
    });

    it.each([
      ['no name', request('tools/call', {}), 'Missing tool name'],
      ['no params at all', request('tools/call'), 'Missing tool name'],
      ['an empty name', callTool(''), 'Missing tool name'],
      ['a non-string name', callTool(42), 'Invalid params: tool name must be a string'],
      [
        'array arguments',
        callTool('mcp_plain', [1]),
        'Invalid params: arguments must be an object',
      ],
      [
        'string arguments',
        callTool('mcp_plain', 'x'),
        'Invalid params: arguments must be an object',
      ],
    ])('answers %s with -32602', async (_label, body, text) => {
      const { message } = await respond(body);
      expect(message.error).toEqual({ code: -32602, message: text });
    });

    it('treats null arguments as none', async () => {
      const result = await resultOf<CallToolResult>(callTool('mcp_plain', null));
      expect(result.isError).toBe(false);
    });

    it('adds structuredContent for tools with an output schema only (every built-in has one)', async () => {
      const result = await resultOf<CallToolResult>(callTool('mcp_summary', { id: 'abc' }));
      expect(result).toMatchObject({
        isError: false,
        structuredContent: { id: 'abc', title: 'Record abc' },
      });
      expect(unwrapUntrusted(result.content[0].text)).toBe(
        JSON.stringify({ id: 'abc', title: 'Record abc' }),
      );
      const plain = await resultOf<CallToolResult>(callTool('mcp_plain', {}));
      expect(plain).not.toHaveProperty('structuredContent');
    });

    it('returns a rate-limited call as an ordinary isError result', async () => {
      const limited = makeAgent({
        rateLimiter: {
          check: () => {
            throw new RateLimitExceededError(2.5, 10, 60);
          },
        },
      });
      const { status, message } = await respond(callTool('mcp_plain', {}), limited);
      expect(status).toBe(200);
      expect(message.result).toEqual({
        content: [
          { type: 'text', text: 'Rate limit exceeded (10 requests per 60s). Retry after 2.5s' },
        ],
        isError: true,
        _meta: { 'parse.error_code': 'rate_limited', 'parse.retry_after': 2.5 },
        structuredContent: {
          error: 'Rate limit exceeded (10 requests per 60s). Retry after 2.5s',
          error_code: 'rate_limited',
          retry_after: 2.5,
        },
      });
    });
  });

  describe('a rate limiter that cannot count', () => {
    it('answers a tool call with HTTP 503, Retry-After and a JSON-RPC error, not a tool result', async () => {
      const unavailable = makeAgent({
        rateLimiter: {
          check: () => {
            throw new RateLimiterUnavailableError(2.4, 10, 60);
          },
        },
      });
      const answer = await respond(callTool('mcp_plain', {}), unavailable);
      expect(answer.status).toBe(503);
      expect((answer as { headers?: Record<string, string> }).headers).toEqual({
        'Retry-After': '3',
      });
      expect(answer.message.result).toBeUndefined();
      expect(answer.message.error).toEqual({
        code: -32000,
        message: expect.stringMatching(/^Rate limiter unavailable .*Retry after 2\.4s$/),
      });
    });

    it('treats a limiter that breaks (not a RateLimitExceededError) the same way', async () => {
      const broken = makeAgent({
        rateLimiter: {
          check: () => {
            throw new TypeError('store exploded');
          },
        },
      });
      const answer = await respond(callTool('mcp_plain', {}), broken);
      expect(answer.status).toBe(503);
      expect(String(answer.message.error?.message)).toMatch(/^Rate limiter unavailable/);
      expect(JSON.stringify(answer.message)).not.toMatch(/exploded/);
    });
  });

  describe('cancellation', () => {
    beforeEach(resetSlow);

    it('answers with the cancelled shape when the signal aborts mid-call', async () => {
      const controller = new AbortController();
      const pending = respond(callTool('mcp_slow', {}), master, { signal: controller.signal });
      await slow.started;
      controller.abort('notifications_cancelled');
      const { status, message } = await pending;
      expect(status).toBe(200);
      expect(message.result).toEqual({
        content: [{ type: 'text', text: 'Cancelled by client (notifications_cancelled)' }],
        isError: true,
        cancelled: true,
      });
      expect(slow.aborted).toBe(true);
    });

    it('does not start the tool when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const { message } = await respond(callTool('mcp_slow', {}), master, {
        signal: controller.signal,
      });
      expect(message.result).toEqual({
        content: [{ type: 'text', text: 'Cancelled by client' }],
        isError: true,
        cancelled: true,
      });
    });

    it('cancels the running tool when the subscriber goes away', async () => {
      const seen: DispatchMessage[] = [];
      const subscription = dispatcher
        .dispatch(callTool('mcp_slow', {}), master)
        .subscribe((m) => seen.push(m));
      await slow.started;
      subscription.unsubscribe();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(slow.aborted).toBe(true);
      expect(seen).toEqual([]);
    });
  });

  describe('progress', () => {
    it('forwards tool progress as notifications before the response when a token was sent', async () => {
      const messages = await messagesOf(
        callTool('mcp_progress', {}, { _meta: { progressToken: 'tok-1' } }),
      );
      expect(messages.map((m) => m.kind)).toEqual(['notification', 'notification', 'response']);
      expect(messages[0]).toEqual({
        kind: 'notification',
        message: {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: 'tok-1', progress: 1, total: 2, message: 'half way' },
        },
      });
      expect(messages[1]).toEqual({
        kind: 'notification',
        message: {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: 'tok-1', progress: 2 },
        },
      });
    });

    it('sends no notifications without a progress token', async () => {
      const messages = await messagesOf(callTool('mcp_progress', {}));
      expect(messages.map((m) => m.kind)).toEqual(['response']);
    });
  });

  describe('response size cap', () => {
    it('refuses an oversized tool result without sending its bytes', async () => {
      const { status, message } = await respond(callTool('mcp_huge', {}));
      expect(status).toBe(200);
      const result = message.result as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result._meta).toEqual({ 'parse.error_code': 'response_too_large' });
      expect(result).not.toHaveProperty('structuredContent');
      expect(result.content[0].text).toContain('blob');
      const wire = JSON.stringify(message);
      expect(Buffer.byteLength(wire)).toBeLessThan(64 * 1024);
      expect(wire).not.toContain('zzzz');
    });

    it('trims query_class rows to fit and annotates what was dropped', async () => {
      const small = new McpDispatcher(tools, prompts, { maxResponseBytes: 8000 });
      const result = await resultOf<CallToolResult>(
        callTool('query_class', { class_name: 'McpDispPost', limit: 12, order: 'title' }),
        master,
        undefined,
        small,
      );
      expect(result.isError).toBe(false);
      const text = result.content[0].text;
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8000);
      const data = JSON.parse(unwrapUntrusted(text)) as {
        results: Array<Record<string, unknown>>;
        _truncated: unknown;
      };
      expect(data._truncated).toMatchObject({
        reason: 'response_exceeded_max_bytes',
        dropped_fields: ['body'],
        original_count: 12,
      });
      expect(data.results.length).toBeGreaterThan(0);
      expect(data.results.every((row) => !('body' in row))).toBe(true);
      expect(data).not.toHaveProperty('next_call');
    });
  });

  describe('protocol errors', () => {
    it('refuses a notification that carries an id', async () => {
      const { message } = await respond({
        jsonrpc: '2.0',
        id: 9,
        method: 'notifications/initialized',
      });
      expect(message).toEqual({
        jsonrpc: '2.0',
        id: 9,
        error: { code: -32600, message: 'Invalid Request: notifications must not carry an id' },
      });
    });

    it.each([
      'notifications/initialized',
      'notifications/cancelled',
      'notifications/roots/list_changed',
    ])('accepts %s without a reply', async (method) => {
      const messages = await messagesOf({ jsonrpc: '2.0', method, params: {} });
      expect(messages).toEqual([{ kind: 'accepted' }]);
      const nullId = await messagesOf({ jsonrpc: '2.0', id: null, method });
      expect(nullId).toEqual([{ kind: 'accepted' }]);
    });

    it('accepts a client response to a server request', async () => {
      expect(await messagesOf({ jsonrpc: '2.0', id: 3, result: {} })).toEqual([
        { kind: 'accepted' },
      ]);
    });

    it('answers unknown methods with -32601', async () => {
      const { status, message } = await respond(request('tools/destroy'));
      expect(status).toBe(200);
      expect(message.error).toEqual({ code: -32601, message: 'Method not found: tools/destroy' });
      const numeric = await respond({ jsonrpc: '2.0', id: 2, method: 5 });
      expect(numeric.message.error).toEqual({ code: -32601, message: 'Method not found: 5' });
      const inherited = await respond(request('constructor'));
      expect(inherited.message.error?.code).toBe(-32601);
    });

    it.each([
      ['null', null, null],
      ['an array (batch)', [request('ping')], null],
      ['a string', 'ping', null],
      ['an object without method', { jsonrpc: '2.0', id: 4 }, 4],
    ])('answers %s with -32700 Invalid Request', async (_label, body, id) => {
      const { status, message } = await respond(body);
      expect(status).toBe(200);
      expect(message).toEqual({
        jsonrpc: '2.0',
        id,
        error: { code: -32700, message: 'Invalid Request' },
      });
    });

    it('never errors the Observable and always ends with exactly one terminal item', async () => {
      const bodies: unknown[] = [
        undefined,
        42,
        { method: {} },
        { method: 'tools/call', params: 'x', id: {} },
        { method: 'resources/read', params: { uri: { toString: 1 } }, id: 1 },
        Object.create(null),
      ];
      for (const body of bodies) {
        const messages = await messagesOf(body);
        const terminals = messages.filter((m) => m.kind !== 'notification');
        expect(terminals).toHaveLength(1);
        expect(messages[messages.length - 1]).toBe(terminals[0]);
      }
    });
  });

  describe('unexpected errors and authorization', () => {
    afterEach(() => prompts.reset());

    it('answers "Internal error" and sends the details only to the logger', async () => {
      prompts.register({
        name: 'mcp_broken',
        description: 'Fails.',
        render: () => {
          throw new Error('database password is hunter2');
        },
      });
      const logger = { error: jest.fn() };
      const { status, message } = await respond(
        request('prompts/get', { name: 'mcp_broken' }),
        master,
        {
          logger,
        },
      );
      expect(status).toBe(200);
      expect(message).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32603, message: 'Internal error' },
      });
      expect(JSON.stringify(message)).not.toContain('hunter2');
      expect(logger.error).toHaveBeenCalledTimes(1);
      expect(logger.error.mock.calls[0][0]).toContain('database password is hunter2');
      expect(logger.error.mock.calls[0][1]).toBeInstanceOf(Error);
    });

    it('answers 401 with the fixed body when a tool refuses the caller', async () => {
      const { status, message } = await respond(callTool('mcp_refuse_identity', {}, {}), master);
      expect(status).toBe(401);
      expect(message).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32001, message: 'Unauthorized' },
      });
      expect(JSON.stringify(message)).not.toMatch(/expired|user 42/);
    });

    it('answers 401 when a prompt renderer refuses the caller', async () => {
      prompts.register({
        name: 'mcp_locked',
        description: 'Refuses.',
        render: () => {
          throw new AgentUnauthorizedError('nope', { reason: 'locked' });
        },
      });
      const { status, message } = await respond(request('prompts/get', { name: 'mcp_locked' }, 5));
      expect(status).toBe(401);
      expect(message.error).toEqual({ code: -32001, message: 'Unauthorized' });
      expect(message.id).toBe(5);
    });
  });
});
