/**
 * Every built-in tool, called over the MCP dispatcher on a real Parse Server (with the direct
 * PostgreSQL path, so the analytics tools run) at three response size limits: a tiny one (every
 * result is oversize: each tool recovers or refuses), a small one (row tools recover) and the
 * default. Every hint and refusal text is read for the arguments it names (written `name:`, and
 * `tool(name: ...)` for another tool's call), and each must be an argument of the tool it names
 * in that tool's input schema: a hint never sends a model to an argument the tool does not take.
 */
import 'reflect-metadata';
import { lastValueFrom, toArray } from 'rxjs';
import {
  AgentMethod,
  AgentSearchable,
  AgentVisible,
  LocalLexicalEmbedder,
  ParseClass,
  SearchIndexer,
  type ParseAgent,
  type ToolRegistry,
} from 'nestjs-parse-agent';
import { McpDispatcher } from 'nestjs-parse-agent/mcp/mcp-dispatcher';
import { PromptRegistry } from 'nestjs-parse-agent/mcp/prompt-registry';
import { unwrapUntrusted, type CallToolResult } from 'nestjs-parse-agent/mcp/tool-call-result';
import { BUILTIN_TOOLS } from 'nestjs-parse-agent/tools/builtin';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { createObject, defineClass, pointer } from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';

const run = Date.now().toString(36);
const POST = `OvPost_${run}`;
const REF = `OvRef_${run}`;
const SCRATCH = `OvScratch_${run}`;
const GATES = [
  'PARSE_AGENT_ALLOW_WRITE_TOOLS',
  'PARSE_AGENT_ALLOW_RAW_CRUD',
  'PARSE_AGENT_ALLOW_SCHEMA_OPS',
  'PARSE_AGENT_ALLOW_RAW_SCHEMA',
] as const;

@ParseClass(POST)
@AgentVisible()
@AgentSearchable({ fields: ['body'] })
class OvPost {
  @AgentMethod({ description: 'A large report.', permission: 'readonly' })
  static report() {
    return { lines: Array.from({ length: 40 }, (_, i) => `line ${i} ${'z'.repeat(200)}`) };
  }
}

@ParseClass(REF)
@AgentVisible()
class OvRef {}

@ParseClass(SCRATCH)
@AgentVisible()
class OvScratch {}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The input schema's argument names of every built-in tool. */
const ARGUMENTS = new Map(
  BUILTIN_TOOLS.map((t) => [t.name, Object.keys((t.inputSchema.properties as Json) ?? {})]),
);

/**
 * Names that are arguments somewhere but also plain words are only read in `name:` form; these are
 * not words, so a bare mention counts too (`select` is no tool's argument: hints once named it).
 */
const UNMISTAKABLE = [
  'select',
  'keys',
  'skip',
  'ids',
  'pipeline',
  'row_cap',
  'object_id',
  'class_name',
  'value_field',
  'flatten_arrays',
  'facet_limit',
  'compact_pointers',
  'apply_canonical_filter',
  'method_name',
  'dry_run',
];

/** The arguments a text names, each with the tool it belongs to. */
export function argumentMentions(
  tool: string,
  text: string,
): Array<{ tool: string; name: string }> {
  const out: Array<{ tool: string; name: string }> = [];
  let rest = text;
  // Another tool's call: `get_object(class_name: "Post", object_id: <id>)`.
  for (const match of text.matchAll(/\b([a-z][a-z_]*)\(([^)]*)\)/g)) {
    if (!ARGUMENTS.has(match[1])) continue;
    for (const arg of match[2].matchAll(/(?:^|[\s,])([a-z][a-z0-9_]*):/g)) {
      out.push({ tool: match[1], name: arg[1] });
    }
    rest = rest.replace(match[0], ' ');
  }
  for (const match of rest.matchAll(/(?<![\w$"'.-])([a-z][a-z0-9_]*):(?!\/)/g)) {
    out.push({ tool, name: match[1] });
  }
  for (const name of UNMISTAKABLE) {
    if (new RegExp(`(?<![\\w$"'.])${name}(?![\\w"'])`).test(rest)) out.push({ tool, name });
  }
  return out;
}

/**
 * Every hint-like text of a result: an oversize refusal, `hint` and `_truncated.hint` at any depth.
 * Other failures (a search path that is not configured, a bad argument) are the tool's own
 * errors, read for unmistakable names only (see `strict`).
 */
function hintTexts(result: CallToolResult): Array<{ text: string; strict: boolean }> {
  if (result.isError) {
    const text = unwrapUntrusted(result.content[0]?.text ?? '');
    return [{ text, strict: result._meta?.['parse.error_code'] === 'response_too_large' }];
  }
  const data = JSON.parse(unwrapUntrusted(result.content[0].text)) as unknown;
  const out: string[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      for (const [key, v] of Object.entries(value)) {
        if (key === 'hint' && typeof v === 'string') out.push(v);
        else if (key !== 'results' && key !== 'objects' && key !== 'object') walk(v);
      }
    }
  };
  walk(data);
  return out.map((text) => ({ text, strict: true }));
}

describe('oversize results and hints of every built-in tool', () => {
  let bed: AgentTestBed;
  let agent: ParseAgent;
  let tools: ToolRegistry;
  let prompts: PromptRegistry;
  const saved: Record<string, string | undefined> = {};
  let ids: string[] = [];

  beforeAll(async () => {
    for (const g of GATES) {
      saved[g] = process.env[g];
      process.env[g] = 'true';
    }
    await defineClass(REF, { name: { type: 'String' } });
    const refId = await createObject(REF, { name: 'r' });
    await defineClass(POST, {
      title: { type: 'String' },
      body: { type: 'String' },
      n: { type: 'Number' },
      when: { type: 'Date' },
      ref: { type: 'Pointer', targetClass: REF },
    });
    ids = [];
    for (let i = 0; i < 30; i++) {
      ids.push(
        await createObject(POST, {
          title: `post ${i}`,
          body: `b${i}`.repeat(900),
          n: i,
          when: { __type: 'Date', iso: new Date(Date.UTC(2024, 0, 1 + i)).toISOString() },
          ref: pointer(REF, refId),
        }),
      );
    }
    await defineClass(SCRATCH, { label: { type: 'String' } });
    bed = await createAgentTestBed([OvPost, OvRef, OvScratch], {
      postgres: { uri: testParseConfig().databaseURI },
      embeddings: new LocalLexicalEmbedder(),
    });
    // The posts' long bodies embedded: semantic_search's chunks and documents are large too.
    await bed.module.get(SearchIndexer).indexRows(
      POST,
      ids.map((objectId, i) => ({ objectId, body: `b${i}`.repeat(900) })),
    );
    agent = bed.factory.create({ permissions: 'admin', allowMutations: true });
    tools = bed.tools;
    prompts = bed.module.get(PromptRegistry);
  }, 120_000);

  afterAll(async () => {
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
    await bed?.close();
  });

  /** One call per built-in tool; the write tools work on a scratch class. */
  function calls(): Array<[string, Json]> {
    const c = POST;
    return [
      ['list_tools', {}],
      ['get_all_schemas', {}],
      ['get_schema', { class_name: c }],
      ['query_class', { class_name: c, limit: 30, order: 'n' }],
      ['count_objects', { class_name: c }],
      ['get_object', { class_name: c, object_id: ids[0], include: ['ref'] }],
      ['get_objects', { class_name: c, ids: ids.slice(0, 20) }],
      ['get_sample_objects', { class_name: c, limit: 20 }],
      ['explain_query', { class_name: c, where: { n: { $gt: 1 } } }],
      ['aggregate', { class_name: c, pipeline: [{ $sort: { n: 1 } }] }],
      ['group_by', { class_name: c, field: 'title', limit: 100 }],
      ['group_by_date', { class_name: c, field: 'when', interval: 'day' }],
      ['distinct', { class_name: c, field: 'title' }],
      ['export_data', { class_name: c, row_cap: 30 }],
      ['semantic_search', { class_name: c, query: 'b1 b2 b3', k: 20 }],
      ['atlas_text_search', { class_name: c, query: 'post', fields: ['title'] }],
      ['atlas_autocomplete', { class_name: c, query: 'po', field: 'title' }],
      ['atlas_faceted_search', { class_name: c, query: 'post', fields: ['title'], facets: ['n'] }],
      ['call_method', { class_name: c, method_name: 'report' }],
      ['create_class', { class_name: `${SCRATCH}X`, fields: { label: { type: 'String' } } }],
      ['create_object', { class_name: SCRATCH, values: { label: 'x'.repeat(500) } }],
      ['update_object', { class_name: SCRATCH, object_id: '<created>', values: { label: 'y' } }],
      ['delete_object', { class_name: SCRATCH, object_id: '<created>' }],
      ['delete_class', { class_name: `${SCRATCH}X` }],
    ];
  }

  async function callOver(dispatcher: McpDispatcher, name: string, args: Json) {
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } };
    const messages = await lastValueFrom(dispatcher.dispatch(body, agent).pipe(toArray()));
    const last = messages[messages.length - 1] as { kind: string; message: Json };
    return last.message.result as CallToolResult;
  }

  /** Runs every call at one limit; the write tools' ids chain from create_object. */
  async function runAll(maxResponseBytes: number) {
    const dispatcher = new McpDispatcher(tools, prompts, { maxResponseBytes });
    const out: Array<{ name: string; args: Json; result: CallToolResult }> = [];
    let created: string | undefined;
    for (const [name, raw] of calls()) {
      const args = raw.object_id === '<created>' ? { ...raw, object_id: created } : raw;
      if (args.object_id === undefined && raw.object_id === '<created>') continue;
      if (name === 'create_object') {
        // Created at the default limit so that its id is known; the tiny limit refuses the answer.
        const made = await agent.execute('create_object', args);
        created = made.success ? ((made.data as Json).object_id as string) : undefined;
      }
      out.push({ name, args, result: await callOver(dispatcher, name, args) });
    }
    return out;
  }

  it('every tool names only its own arguments in every hint, at every size limit', async () => {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const limit of [200, 400, 6000, 4 * 1024 * 1024]) {
      for (const { name, result } of await runAll(limit)) {
        for (const { text, strict } of hintTexts(result)) {
          seen.add(name);
          const mentions = argumentMentions(name, text).filter(
            (m) => strict || UNMISTAKABLE.includes(m.name),
          );
          for (const mention of mentions) {
            if (!(ARGUMENTS.get(mention.tool) ?? []).includes(mention.name)) {
              problems.push(
                `${name} @${limit}: names '${mention.name}' (${mention.tool}): ${text}`,
              );
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
    // Not vacuous: every built-in tool produced at least one text to check.
    expect([...seen].sort()).toEqual([...ARGUMENTS.keys()].sort());
  }, 120_000);

  it('at a tiny limit every tool either recovers with _truncated or refuses as response_too_large', async () => {
    for (const { name, result } of await runAll(400)) {
      if (result.isError) {
        const code = result._meta?.['parse.error_code'];
        // A write or search that failed for its own reason has nothing to trim: only size is asked.
        if (code !== 'response_too_large') continue;
        expect({ name, text: result.content[0].text }).toEqual({
          name,
          text: expect.stringContaining(`${name} produced`),
        });
      } else if (Buffer.byteLength(result.content[0].text) > 400) {
        const data = JSON.parse(unwrapUntrusted(result.content[0].text)) as Json;
        expect({ name, truncated: data._truncated !== undefined }).toEqual({
          name,
          truncated: true,
        });
      }
    }
  }, 60_000);

  it.each([
    ['query_class', 6000],
    ['aggregate', 6000],
    ['get_objects', 6000],
    ['get_object', 1500],
    ['get_sample_objects', 6000],
  ] as const)(
    '%s recovers at a small limit (%i bytes): keeps what fits and says what it left out',
    async (tool, limit) => {
      const [, args] = calls().find(([name]) => name === tool)!;
      const dispatcher = new McpDispatcher(tools, prompts, { maxResponseBytes: limit });
      const result = await callOver(dispatcher, tool, args);
      expect(result.isError).toBe(false);
      expect(Buffer.byteLength(result.content[0].text)).toBeLessThanOrEqual(limit);
      const data = JSON.parse(unwrapUntrusted(result.content[0].text)) as Json;
      expect(data._truncated).toMatchObject({
        reason: 'response_exceeded_max_bytes',
        dropped_fields: ['body'],
      });
      const rows: Json[] = data.results ??
        data.samples ??
        (data.objects && Object.values(data.objects)) ?? [data.object];
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row).not.toHaveProperty('body');
        expect(row).toHaveProperty('title');
      }
      expect(result.structuredContent).toEqual(data);
    },
  );
});

describe('argumentMentions', () => {
  it("reads name: mentions, other tools' calls and unmistakable bare names", () => {
    expect(
      argumentMentions(
        'aggregate',
        'Ask for less: fewer fields via keys: (select: for aggregates). Call get_object(class_name: "P", object_id: <id>); row_cap too.',
      ),
    ).toEqual([
      { tool: 'get_object', name: 'class_name' },
      { tool: 'get_object', name: 'object_id' },
      { tool: 'aggregate', name: 'less' },
      { tool: 'aggregate', name: 'keys' },
      { tool: 'aggregate', name: 'select' },
      { tool: 'aggregate', name: 'select' },
      { tool: 'aggregate', name: 'keys' },
      { tool: 'aggregate', name: 'row_cap' },
    ]);
  });
});
