import {
  AgentEvents,
  ParseAgent,
  ParseClass,
  type AbandonedStreamEvent,
  type DataOperationEvent,
  type PolicedToolContext,
} from 'nestjs-parse-agent';
import { createAgentServices, type StandaloneAgentServices } from 'nestjs-parse-agent/mcp';
import { randomBytes } from 'node:crypto';
import { createObject, createUser, type SeededUser } from '../harness/fixtures';
import { testParseConfig, testParseConnection } from '../harness/parse-rest';
import { eventually, openSsePost, startMcpTestApp, type McpTestApp } from '../mcp/mcp-test-app';

const suffix = randomBytes(4).toString('hex');
const NOTE = `DbEventNote${suffix}`;
/** A value that must never reach an event or a log line. */
const SECRET = `needle-${suffix}`;

@ParseClass(NOTE)
class DbEventNote {}

/**
 * Issue 36 item 6 on the real Parse Server and PostgreSQL: one event per data-path operation of a
 * tool call (path, operation, class, identity kind, stage names, rows, duration; never values),
 * the slow-query log, and the count and event of streams a client abandoned.
 */
describe('database events', () => {
  let built: StandaloneAgentServices;
  const events: DataOperationEvent[] = [];
  const warnings: string[] = [];
  let alice: SeededUser;

  beforeAll(async () => {
    alice = await createUser(`dbev-${suffix}`);
    for (let i = 0; i < 4; i++) {
      await createObject(
        NOTE,
        { title: i < 2 ? SECRET : `other-${i}`, rank: i },
        {
          '*': { read: true },
        },
      );
    }
    built = createAgentServices({
      parse: testParseConnection(),
      models: [DbEventNote],
      postgres: { uri: testParseConfig().databaseURI },
      slowQueryThresholdMs: 0,
      warn: (message) => warnings.push(message),
    });
    built.services.events.dataOperations$.subscribe((e) => events.push(e));
  });

  afterAll(() => built?.close());

  it('a find through Parse REST: path, class, identity kind and rows, no values', async () => {
    const agent = new ParseAgent({ sessionToken: alice.sessionToken }, built.services);
    const envelope = await agent.execute('query_class', {
      class_name: NOTE,
      where: { title: SECRET },
    });
    expect(envelope.success).toBe(true);
    const mine = events.filter((e) => e.agent_id === agent.agentId);
    expect(mine).toEqual([
      expect.objectContaining({
        path: 'parse-rest',
        operation: 'find',
        class_name: NOTE,
        identity: 'session_token',
        rows: 2,
        success: true,
        tool: 'query_class',
        duration_ms: expect.any(Number) as number,
      }),
    ]);
    expect(JSON.stringify(events)).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toContain(alice.sessionToken);
  });

  it('an aggregate on the direct PostgreSQL path names its stages, not their values', async () => {
    const agent = new ParseAgent({ sessionToken: alice.sessionToken }, built.services);
    const envelope = await agent.execute('aggregate', {
      class_name: NOTE,
      pipeline: [
        { $match: { title: SECRET } },
        { $group: { _id: '$title', n: { $sum: 1 } } },
        { $sort: { n: -1 } },
      ],
    });
    expect(envelope.success).toBe(true);
    const aggregate = events.find(
      (e) => e.agent_id === agent.agentId && e.operation === 'aggregate',
    );
    expect(aggregate).toMatchObject({ path: 'postgres', identity: 'session_token', rows: 1 });
    expect(aggregate!.stage_types).toEqual(expect.arrayContaining(['$match', '$group', '$sort']));
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  it('failed operations are events too, with the error class', async () => {
    const agent = new ParseAgent({ sessionToken: 'r:not-a-real-session' }, built.services);
    await agent.execute('query_class', { class_name: NOTE });
    expect(events.filter((e) => e.agent_id === agent.agentId)).toEqual([
      expect.objectContaining({
        operation: 'find',
        success: false,
        error_class: expect.any(String) as string,
      }),
    ]);
  });

  it('the slow-query log: one line per operation over the threshold, without values', () => {
    const slow = warnings.filter((w) => w.startsWith('SLOW data operation'));
    expect(slow.length).toBeGreaterThanOrEqual(3);
    expect(
      slow.some((w) => /SLOW data operation aggregate .* path=postgres .*stages=\$match/.test(w)),
    ).toBe(true);
    expect(warnings.join('\n')).not.toContain(SECRET);
  });

  it('no subscriber and no threshold: paths are not wrapped at all', async () => {
    const quiet = createAgentServices({ parse: testParseConnection(), models: [DbEventNote] });
    try {
      const agent = new ParseAgent({}, quiet.services);
      expect(quiet.services.events.dataObserved).toBe(false);
      expect((await agent.execute('count_objects', { class_name: NOTE })).success).toBe(true);
    } finally {
      await quiet.close();
    }
  });
});

describe('streams abandoned by a client disconnect', () => {
  let t: McpTestApp;
  const abandoned: AbandonedStreamEvent[] = [];

  beforeAll(async () => {
    t = await startMcpTestApp({ mcp: { heartbeatIntervalMs: 50 } });
    t.tools.register({
      name: 'abandon_wait',
      description: 'Runs until its signal aborts (or 10 s pass).',
      handler: (_args, ctx: PolicedToolContext) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve({ finished: true }), 10_000);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve({ finished: false });
          });
        }),
    });
    t.tools.register({
      name: 'abandon_quick',
      description: 'Answers at once.',
      handler: () => ({ ok: 1 }),
    });
    t.app.get(AgentEvents).abandonedStreams$.subscribe((e) => abandoned.push(e));
  });
  afterAll(() => t.close());

  const call = (id: number, name: string) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: {}, _meta: { progressToken: `p${id}` } },
  });

  it('counts and reports a stream left before its answer, and not one that was answered', async () => {
    const answered = await openSsePost(t.url, call(1, 'abandon_quick'));
    await answered.rest();
    const stream = await openSsePost(t.url, call(2, 'abandon_wait'));
    expect((await stream.next())?.event).toBe('message');
    stream.abort();
    await eventually(() => expect(abandoned).toHaveLength(1));
    expect(abandoned[0]).toMatchObject({ method: 'tools/call', tool: 'abandon_wait', total: 1 });
    expect(abandoned[0].open_ms).toBeGreaterThanOrEqual(0);
    const second = await openSsePost(t.url, call(3, 'abandon_wait'));
    await second.next();
    second.abort();
    await eventually(() => expect(abandoned.map((e) => e.total)).toEqual([1, 2]));
  });
});
