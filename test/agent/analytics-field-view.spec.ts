import { AgentFields, AgentVisible, ParseClass, type ParseAgent } from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  type SeededUser,
} from '../harness/fixtures';
import { testParseConfig } from '../harness/parse-rest';

/**
 * Analytics and refusals against what one user may see, on the direct PostgreSQL path of a real
 * Parse Server: a class whose allowlist names `email`, which protectedFields hide from everyone
 * but an admin role, and which has columns outside the allowlist (`isDeleted`, `deletedAt`).
 * Its own fixture rows carry an explicit public-read ACL.
 */
const run = Date.now().toString(36);
const CONTACT = `FvContact_${run}`;
const EVENT = `FvEvent_${run}`;
const adminRole = `fv_admin_${run}`;
const PUBLIC = { '*': { read: true } };
/** Names that must never reach a refusal for a non-admin: outside the allowlist, or protected. */
const UNUSABLE = /isDeleted|deletedAt|email|protected/;

@ParseClass(CONTACT)
@AgentVisible()
@AgentFields('name', 'email', 'tier')
class Contact {}

@ParseClass(EVENT)
@AgentVisible()
@AgentFields('kind', 'at')
class Event {}

/** Every instant lands in its own second; the buckets per interval are computed by hand below. */
const EVENT_TIMES = [
  '2024-01-01T00:00:00.100Z',
  '2024-01-01T00:00:00.900Z',
  '2024-01-01T00:00:01.000Z',
  '2024-01-01T00:01:30.000Z',
  '2024-01-01T01:00:00.000Z',
  '2024-01-02T00:00:00.000Z',
  '2024-01-09T00:00:00.000Z',
  '2024-02-01T00:00:00.000Z',
  '2024-05-01T00:00:00.000Z',
  '2025-01-01T00:00:00.000Z',
];

const EXPECTED: Record<string, Array<[string, number]>> = {
  second: [
    ['2024-01-01 00:00:00', 2],
    ['2024-01-01 00:00:01', 1],
    ['2024-01-01 00:01:30', 1],
    ['2024-01-01 01:00:00', 1],
    ['2024-01-02 00:00:00', 1],
    ['2024-01-09 00:00:00', 1],
    ['2024-02-01 00:00:00', 1],
    ['2024-05-01 00:00:00', 1],
    ['2025-01-01 00:00:00', 1],
  ],
  minute: [
    ['2024-01-01 00:00', 3],
    ['2024-01-01 00:01', 1],
    ['2024-01-01 01:00', 1],
    ['2024-01-02 00:00', 1],
    ['2024-01-09 00:00', 1],
    ['2024-02-01 00:00', 1],
    ['2024-05-01 00:00', 1],
    ['2025-01-01 00:00', 1],
  ],
  hour: [
    ['2024-01-01 00:00', 4],
    ['2024-01-01 01:00', 1],
    ['2024-01-02 00:00', 1],
    ['2024-01-09 00:00', 1],
    ['2024-02-01 00:00', 1],
    ['2024-05-01 00:00', 1],
    ['2025-01-01 00:00', 1],
  ],
  day: [
    ['2024-01-01', 5],
    ['2024-01-02', 1],
    ['2024-01-09', 1],
    ['2024-02-01', 1],
    ['2024-05-01', 1],
    ['2025-01-01', 1],
  ],
  week: [
    ['2024-W01', 6],
    ['2024-W02', 1],
    ['2024-W05', 1],
    ['2024-W18', 1],
    ['2025-W01', 1],
  ],
  month: [
    ['2024-01', 7],
    ['2024-02', 1],
    ['2024-05', 1],
    ['2025-01', 1],
  ],
  quarter: [
    ['2024-Q1', 8],
    ['2024-Q2', 1],
    ['2025-Q1', 1],
  ],
  year: [
    ['2024', 9],
    ['2025', 1],
  ],
};

describe('analytics and refusals follow what the user may see (real Parse Server, direct PostgreSQL)', () => {
  let bed: AgentTestBed;
  let alice: SeededUser;
  let carol: SeededUser;
  let asAlice: ParseAgent;
  let asCarol: ParseAgent;
  let asAliceAcl: ParseAgent;
  let master: ParseAgent;

  beforeAll(async () => {
    alice = await createUser(`fv_alice_${run}`);
    carol = await createUser(`fv_carol_${run}`);
    await createRole(adminRole, { users: [carol.objectId] });
    await defineClass(
      CONTACT,
      {
        name: { type: 'String' },
        email: { type: 'String' },
        tier: { type: 'String' },
        isDeleted: { type: 'Boolean' },
        deletedAt: { type: 'Date' },
      },
      {
        find: { '*': true },
        get: { '*': true },
        count: { '*': true },
        create: {},
        update: {},
        delete: {},
        addField: {},
        protectedFields: { '*': ['email'], [`role:${adminRole}`]: [] },
      },
    );
    for (const [name, tier] of [
      ['Ada', 'gold'],
      ['Bo', 'gold'],
      ['Cy', 'silver'],
    ]) {
      await createObject(
        CONTACT,
        { name, tier, email: `${name.toLowerCase()}@example.com`, isDeleted: false },
        PUBLIC,
      );
    }
    await defineClass(EVENT, { kind: { type: 'String' }, at: { type: 'Date' } });
    for (const iso of EVENT_TIMES) {
      await createObject(EVENT, { kind: 'tick', at: { __type: 'Date', iso } }, PUBLIC);
    }
    bed = await createAgentTestBed([Contact, Event], {
      postgres: { uri: testParseConfig().databaseURI },
    });
    asAlice = bed.factory.create({ sessionToken: alice.sessionToken });
    asCarol = bed.factory.create({ sessionToken: carol.sessionToken });
    asAliceAcl = bed.factory.create({ aclUser: alice.objectId });
    master = bed.factory.create();
  }, 60_000);

  afterAll(() => bed?.close());

  describe('aggregate for a user whose protectedFields hide an allowlisted field', () => {
    it('runs on what the user may see and names what was withheld, never its value', async () => {
      for (const agent of [asAlice, asAliceAcl]) {
        const data = ok(
          await agent.execute('aggregate', {
            class_name: CONTACT,
            pipeline: [{ $sort: { name: 1 } }],
          }),
        );
        expect(data.results.map((r: Data) => r.name)).toEqual(['Ada', 'Bo', 'Cy']);
        expect(data.results.some((r: Data) => 'email' in r)).toBe(false);
        expect(data.results.some((r: Data) => 'isDeleted' in r)).toBe(false);
        expect(data.withheld_fields).toEqual({ email: 'protected' });
        expect(data.withheld_note).toContain('protectedFields');
        expect(JSON.stringify(data)).not.toContain('@example.com');
      }
      const grouped = ok(
        await asAlice.execute('aggregate', {
          class_name: CONTACT,
          pipeline: [{ $group: { _id: '$tier', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
        }),
      );
      expect(grouped.results).toEqual([
        { _id: 'gold', n: 2 },
        { _id: 'silver', n: 1 },
      ]);
    });

    it('export_data in pipeline mode runs on the same view and names what was withheld', async () => {
      for (const agent of [asAlice, asAliceAcl]) {
        const data = ok(
          await agent.execute('export_data', {
            class_name: CONTACT,
            format: 'csv',
            pipeline: [{ $sort: { name: 1 } }],
          }),
        );
        expect(data.row_count).toBe(3);
        expect(data.headers).not.toContain('email');
        expect(data.withheld_fields).toEqual({ email: 'protected' });
        expect(JSON.stringify(data)).not.toContain('@example.com');
      }
    });

    it('keeps the field for a role that may see it, and for the master key', async () => {
      for (const agent of [asCarol, master]) {
        const data = ok(
          await agent.execute('aggregate', {
            class_name: CONTACT,
            pipeline: [{ $sort: { name: 1 } }, { $project: { name: 1, email: 1 } }],
          }),
        );
        expect(data.results.map((r: Data) => r.email)).toEqual([
          'ada@example.com',
          'bo@example.com',
          'cy@example.com',
        ]);
        expect(data).not.toHaveProperty('withheld_fields');
      }
    });
  });

  describe('refusals list only the fields the caller may use', () => {
    const said = (res: { error: string; details?: unknown }) =>
      `${res.error} ${JSON.stringify(res.details ?? {})}`;

    it('aggregate on a protected or non-allowlisted field, from the session and the ACL scope', async () => {
      for (const agent of [asAlice, asAliceAcl]) {
        for (const pipeline of [
          [{ $group: { _id: '$email', n: { $sum: 1 } } }],
          [{ $match: { deletedAt: { $exists: false } } }],
          [{ $project: { isDeleted: 1 } }],
        ]) {
          const res = refused(await agent.execute('aggregate', { class_name: CONTACT, pipeline }));
          // The name the caller wrote may be echoed; nothing else unusable is named or listed.
          const [field] = /email|deletedAt|isDeleted/.exec(JSON.stringify(pipeline)) ?? [];
          expect(said(res).split(String(field)).join('')).not.toMatch(UNUSABLE);
          expect(res.error).toContain('name');
          expect(res.error).toContain('tier');
        }
      }
    });

    it('group_by, distinct and group_by_date on the protected field name only usable fields', async () => {
      for (const [tool, args] of [
        ['group_by', { field: 'email' }],
        ['distinct', { field: 'email' }],
        ['group_by_date', { field: 'email', interval: 'day' }],
        ['group_by', { field: 'tier', where: { email: 'ada@example.com' } }],
      ] as const) {
        const res = refused(await asAlice.execute(tool, { class_name: CONTACT, ...args }));
        expect(said(res).split('email').join('')).not.toMatch(UNUSABLE);
        expect(JSON.stringify(res)).not.toContain('@example.com');
      }
      // Carol may group by it.
      const data = ok(await asCarol.execute('group_by', { class_name: CONTACT, field: 'email' }));
      expect(data.groups).toHaveLength(3);
    });

    it('a row read on the PostgreSQL path (ACL scope) that filters on the protected field', async () => {
      const res = refused(
        await asAliceAcl.execute('query_class', {
          class_name: CONTACT,
          where: { email: 'ada@example.com' },
        }),
      );
      expect(said(res).split('email').join('')).not.toMatch(UNUSABLE);
    });

    it('a row read on Parse REST (session) that names a non-allowlisted field', async () => {
      const res = refused(
        await asAlice.execute('query_class', { class_name: CONTACT, where: { isDeleted: true } }),
      );
      expect(res.error).toContain('Allowed:');
      expect(said(res).split('isDeleted').join('')).not.toMatch(UNUSABLE);
    });
  });

  describe('group_by_date buckets on PostgreSQL for every interval', () => {
    it.each(Object.keys(EXPECTED))(
      '%s, through the path and through the pipeline',
      async (interval) => {
        const expected = EXPECTED[interval].map(([key, value]) => ({ key, value }));
        for (const agent of [master, asAlice]) {
          const chronological = ok(
            await agent.execute('group_by_date', { class_name: EVENT, field: 'at', interval }),
          );
          expect(chronological.groups).toEqual(expected);
          // Another order always runs the group_by_date pipeline ($dateTrunc in $group _id).
          const largestFirst = ok(
            await agent.execute('group_by_date', {
              class_name: EVENT,
              field: 'at',
              interval,
              sort: 'key_desc',
            }),
          );
          expect(largestFirst.groups).toEqual([...expected].reverse());
        }
      },
    );

    it('cuts buckets in the requested time zone on the pipeline path', async () => {
      // 2024-01-01T00:00Z is still 2023-12-31 in New York.
      const data = ok(
        await master.execute('group_by_date', {
          class_name: EVENT,
          field: 'at',
          interval: 'second',
          timezone: 'America/New_York',
          limit: 1,
        }),
      );
      expect(data.groups).toEqual([{ key: '2023-12-31 19:00:00', value: 2 }]);
      expect(data.truncated).toBe(true);
    });
  });
});
