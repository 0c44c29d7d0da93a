import 'reflect-metadata';
import { lastValueFrom, toArray } from 'rxjs';
import { createObject, createUser, defineClass } from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';
import { AgentEvents, type ToolCallEvent } from '../../libs/parse-agent/src/core/agent-events';
import { ParseAgent, type AgentOptions } from '../../libs/parse-agent/src/agent/parse-agent';
import { SlidingWindowRateLimiter } from '../../libs/parse-agent/src/ports/in-memory-rate-limiter';
import { suppressSecurityBanners } from '../../libs/parse-agent/src/core/security-banner';
import { ParseRestClient } from '../../libs/parse-agent/src/data/parse-rest/parse-rest-client';
import { SchemaCache } from '../../libs/parse-agent/src/data/schema-cache';
import { DataRouter } from '../../libs/parse-agent/src/data/data-router';
import { ParseRestDataPathProvider } from '../../libs/parse-agent/src/data/parse-rest/parse-rest-data-path';
import { MetadataRegistry } from '../../libs/parse-agent/src/metadata/metadata-registry';
import { BUILTIN_TOOLS } from '../../libs/parse-agent/src/tools/builtin';
import { ToolRegistry } from '../../libs/parse-agent/src/tools/tool-registry';
import { BUILTIN_PROMPTS } from '../../libs/parse-agent/src/mcp/builtin-prompts';
import { McpDispatcher } from '../../libs/parse-agent/src/mcp/mcp-dispatcher';
import type { JsonRpcResponse } from '../../libs/parse-agent/src/mcp/mcp-dispatcher.types';
import type {
  McpResource,
  McpResourceContents,
} from '../../libs/parse-agent/src/mcp/mcp-resources';
import { PromptRegistry } from '../../libs/parse-agent/src/mcp/prompt-registry';

suppressSecurityBanners();

const cfg = testParseConfig();
const parse = new ParseRestClient(cfg);
const services = {
  data: new DataRouter([new ParseRestDataPathProvider(parse)]),
  schemas: new SchemaCache(parse),
  metadata: new MetadataRegistry({ unregisteredClasses: 'visible' }),
  tools: new ToolRegistry(BUILTIN_TOOLS),
  events: new AgentEvents(),
  rateLimiter: new SlidingWindowRateLimiter(100_000, 60),
  warn: () => undefined,
};
services.metadata.hide('McpSecret');
const makeAgent = (options: AgentOptions = {}) => new ParseAgent(options, services);
const master = makeAgent();
const dispatcher = new McpDispatcher(services.tools, new PromptRegistry(BUILTIN_PROMPTS));

async function respond(
  method: string,
  params?: Record<string, unknown>,
  agent = master,
  using = dispatcher,
): Promise<JsonRpcResponse> {
  const body = { jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) };
  const messages = await lastValueFrom(using.dispatch(body, agent).pipe(toArray()));
  const last = messages[messages.length - 1];
  if (last.kind !== 'response') throw new Error(`expected a response, got ${last.kind}`);
  expect(last.status).toBe(200);
  return last.message;
}

async function read(uri: unknown, agent = master): Promise<McpResourceContents> {
  const message = await respond('resources/read', { uri }, agent);
  expect(message.error).toBeUndefined();
  const { contents } = message.result as { contents: McpResourceContents[] };
  expect(contents).toHaveLength(1);
  return contents[0];
}

describe('MCP resources', () => {
  let alice: ParseAgent;
  let bob: ParseAgent;

  beforeAll(async () => {
    await defineClass('McpResItem', { label: { type: 'String' }, size: { type: 'Number' } });
    await defineClass('McpSecret', { codeword: { type: 'String' } });
    const aliceUser = await createUser(`mcp_res_alice_${Date.now()}`);
    const bobUser = await createUser(`mcp_res_bob_${Date.now()}`);
    await createObject('McpResItem', { label: 'first', size: 1 });
    await createObject('McpResItem', { label: 'second', size: 2 });
    await createObject(
      'McpResItem',
      { label: 'alice private', size: 3 },
      { [aliceUser.objectId]: { read: true } },
    );
    await createObject('McpSecret', { codeword: 'classified-value' });
    alice = makeAgent({ sessionToken: aliceUser.sessionToken });
    bob = makeAgent({ sessionToken: bobUser.sessionToken });
  });

  describe('resources/list', () => {
    it('lists schema, count and samples for each visible class', async () => {
      const message = await respond('resources/list');
      const { resources } = message.result as { resources: McpResource[] };
      const item = resources.filter((r) => r.uri.startsWith('parse://McpResItem/'));
      expect(item.map((r) => [r.uri, r.name, r.mimeType])).toEqual([
        ['parse://McpResItem/schema', 'McpResItem schema', 'application/json'],
        ['parse://McpResItem/count', 'McpResItem count', 'application/json'],
        ['parse://McpResItem/samples', 'McpResItem samples', 'application/json'],
      ]);
      for (const resource of resources) {
        expect(Object.keys(resource)).toEqual(['uri', 'name', 'description', 'mimeType']);
      }
    });

    it('never lists a hidden class', async () => {
      const message = await respond('resources/list');
      expect(JSON.stringify(message)).not.toContain('McpSecret');
    });

    it('follows the agent class filter', async () => {
      const narrowed = makeAgent({ classes: ['McpResItem'] });
      const message = await respond('resources/list', undefined, narrowed);
      const { resources } = message.result as { resources: McpResource[] };
      expect(resources.map((r) => r.uri)).toEqual([
        'parse://McpResItem/schema',
        'parse://McpResItem/count',
        'parse://McpResItem/samples',
      ]);
    });

    it('is empty when the agent may not list schemas', async () => {
      const restricted = makeAgent({ tools: { except: ['get_all_schemas'] } });
      const message = await respond('resources/list', undefined, restricted);
      expect(message.result).toEqual({ resources: [] });
    });
  });

  it('serves four static templates without touching the agent', async () => {
    const events: ToolCallEvent[] = [];
    const subscription = services.events.toolCalls$.subscribe((e) => events.push(e));
    const message = await respond('resources/templates/list');
    subscription.unsubscribe();
    const { resourceTemplates } = message.result as {
      resourceTemplates: Array<Record<string, string>>;
    };
    expect(resourceTemplates.map((t) => [t.uriTemplate, t.name, t.mimeType])).toEqual([
      ['parse://{className}/schema', 'Parse class schema', 'application/json'],
      ['parse://{className}/count', 'Parse class object count', 'application/json'],
      ['parse://{className}/samples', 'Parse class sample objects', 'application/json'],
      ['parse://{className}/query{?where,keys}', 'Parse class query', 'application/json'],
    ]);
    for (const template of resourceTemplates) {
      expect(Object.keys(template)).toEqual(['uriTemplate', 'name', 'description', 'mimeType']);
    }
    expect(events).toEqual([]);
  });

  describe('resources/read', () => {
    it('reads a schema, echoing the URI', async () => {
      const contents = await read('parse://McpResItem/schema');
      expect(contents.uri).toBe('parse://McpResItem/schema');
      expect(contents.mimeType).toBe('application/json');
      expect(contents.text).toContain('label');
      expect(contents.text).toContain('size');
      expect(contents.text).toBe(JSON.stringify(JSON.parse(contents.text)));
    });

    it('defaults to the schema when the kind is left out', async () => {
      const contents = await read('parse://McpResItem');
      expect(contents.uri).toBe('parse://McpResItem');
      expect(contents.text).toBe((await read('parse://McpResItem/schema')).text);
    });

    it('counts as the agent: a row hidden by its ACL is not counted', async () => {
      const countFor = async (agent: ParseAgent) =>
        (JSON.parse((await read('parse://McpResItem/count', agent)).text) as { count: number })
          .count;
      expect(await countFor(alice)).toBe(3);
      expect(await countFor(bob)).toBe(2);
    });

    it('samples at most five rows, as the agent sees them', async () => {
      const text = (await read('parse://McpResItem/samples', bob)).text;
      expect(text).toContain('first');
      expect(text).not.toContain('alice private');
    });

    it.each([
      'parse://bad-name/schema',
      'parse://McpResItem/rows',
      'parse://9Item/count',
      'https://example.com/McpResItem',
      'parse://McpResItem/schema/extra',
      'parse://McpResItem/schema\n',
      '',
    ])('refuses the URI %p with -32602 before running any tool', async (uri) => {
      const events: ToolCallEvent[] = [];
      const subscription = services.events.toolCalls$.subscribe((e) => events.push(e));
      const message = await respond('resources/read', { uri });
      subscription.unsubscribe();
      expect(message.error).toEqual({ code: -32602, message: `Invalid resource URI: ${uri}` });
      expect(events).toEqual([]);
    });

    it('refuses a missing URI with -32602', async () => {
      const message = await respond('resources/read', {});
      expect(message.error).toEqual({ code: -32602, message: 'Invalid resource URI: ' });
    });

    it.each(['schema', 'count', 'samples'])(
      'refuses the hidden class (%s) with -32602 and leaks nothing of it',
      async (kind) => {
        const message = await respond('resources/read', { uri: `parse://McpSecret/${kind}` });
        expect(message.result).toBeUndefined();
        expect(message.error?.code).toBe(-32602);
        const wire = JSON.stringify(message);
        expect(wire).not.toContain('classified-value');
        expect(wire).not.toContain('codeword');
      },
    );

    it('answers the tool’s own error text for a class the agent may not read', async () => {
      const narrowed = makeAgent({ classes: ['McpSecret'] });
      const message = await respond(
        'resources/read',
        { uri: 'parse://McpResItem/count' },
        narrowed,
      );
      expect(message.error).toEqual({
        code: -32602,
        message: "Class 'McpResItem' is outside this agent's classes: allowlist",
      });
    });

    it('refuses a resource larger than the response cap', async () => {
      const small = new McpDispatcher(services.tools, new PromptRegistry(), {
        maxResponseBytes: 50,
      });
      const message = await respond(
        'resources/read',
        { uri: 'parse://McpResItem/schema' },
        master,
        small,
      );
      expect(message.error?.code).toBe(-32602);
      expect(message.error?.message).toMatch(/more than the 50-byte limit/);
    });
  });
});
