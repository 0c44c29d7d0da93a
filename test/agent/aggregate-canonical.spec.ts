import {
  AgentCanonicalFilter,
  AgentVisible,
  ParseClass,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, type Data } from '../harness/envelopes';
import { createObject, defineClass } from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';

/**
 * `aggregate` with `apply_canonical_filter: false` on the direct PostgreSQL path of a real Parse
 * Server: the class's own canonical filter is left out for that call, while the classes it joins
 * keep theirs and the agent's own filters still apply.
 */
const run = Date.now().toString(36);
const NOTE = `AcNote_${run}`;
const TAG = `AcTag_${run}`;
const PUBLIC = { '*': { read: true } };

@ParseClass(NOTE)
@AgentVisible()
@AgentCanonicalFilter({ archived: { $ne: true } })
class Note {}

@ParseClass(TAG)
@AgentVisible()
@AgentCanonicalFilter({ retired: { $ne: true } })
class Tag {}

const titles = (data: Data) => (data.results as Data[]).map((r) => r.title as string).sort();

describe('aggregate apply_canonical_filter', () => {
  let bed: AgentTestBed;
  let master: ParseAgent;
  let filtered: ParseAgent;

  beforeAll(async () => {
    await defineClass(TAG, { name: { type: 'String' }, retired: { type: 'Boolean' } });
    const liveTag = await createObject(TAG, { name: 'live', retired: false }, PUBLIC);
    const retiredTag = await createObject(TAG, { name: 'old', retired: true }, PUBLIC);
    await defineClass(NOTE, {
      title: { type: 'String' },
      archived: { type: 'Boolean' },
      topic: { type: 'String' },
      tag: { type: 'Pointer', targetClass: TAG },
    });
    for (const [title, archived, topic, tag] of [
      ['live-a', false, 'x', liveTag],
      ['live-b', false, 'y', liveTag],
      ['gone', true, 'x', retiredTag],
    ] as const) {
      const pointer = { __type: 'Pointer', className: TAG, objectId: tag };
      await createObject(NOTE, { title, archived, topic, tag: pointer }, PUBLIC);
    }
    bed = await createAgentTestBed([Note, Tag], {
      postgres: { uri: testParseConfig().databaseURI },
    });
    master = bed.factory.create();
    filtered = bed.factory.create({ filters: { [NOTE]: { topic: 'x' } } });
  }, 60_000);

  afterAll(() => bed?.close());

  const run2 = (agent: ParseAgent, args: Record<string, unknown>) =>
    agent.execute('aggregate', { class_name: NOTE, ...args });

  it('applies the canonical filter by default', async () => {
    const data = ok(await run2(master, { pipeline: [{ $sort: { title: 1 } }] }));
    expect(titles(data)).toEqual(['live-a', 'live-b']);
    expect(data.apply_canonical_filter).toBeUndefined();
  });

  it('leaves the class canonical filter out when asked, and says so', async () => {
    const data = ok(
      await run2(master, { pipeline: [{ $sort: { title: 1 } }], apply_canonical_filter: false }),
    );
    expect(titles(data)).toEqual(['gone', 'live-a', 'live-b']);
    expect(data.apply_canonical_filter).toBe(false);
  });

  it("keeps the agent's own filter", async () => {
    const data = ok(
      await run2(filtered, { pipeline: [{ $sort: { title: 1 } }], apply_canonical_filter: false }),
    );
    expect(titles(data)).toEqual(['gone', 'live-a']);
  });

  it('keeps the canonical filter of a joined class', async () => {
    const data = ok(
      await run2(master, {
        pipeline: [
          { $lookup: { from: TAG, localField: 'tag', foreignField: 'objectId', as: 'tags' } },
          { $sort: { title: 1 } },
        ],
        apply_canonical_filter: false,
      }),
    );
    const tagsOf = Object.fromEntries(
      (data.results as Data[]).map((r) => [r.title, (r.tags as Data[]).map((t) => t.name)]),
    );
    // The archived note is back, but the retired tag it points to stays filtered out.
    expect(tagsOf).toEqual({ gone: [], 'live-a': ['live'], 'live-b': ['live'] });
  });
});
