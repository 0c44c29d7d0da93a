import { Aggregator } from 'mingo';
import { Client } from 'pg';
import type { AgentOptions } from 'nestjs-parse-agent';
import { aclReadMatchStage, aclReadSqlClause, agentPrincipals } from 'nestjs-parse-agent/auth';
import type { DataPrincipals } from 'nestjs-parse-agent/data';
import { aclMatchStage as mongoPathAclStage } from 'nestjs-parse-agent/data/mongo/mongo-storage';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok } from '../harness/envelopes';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  type Acl,
  type SeededUser,
} from '../harness/fixtures';
import { findRows, testParseConfig } from '../harness/parse-rest';

/**
 * Rows without an ACL are public to Parse (`_rperm` NULL on PostgreSQL, the field missing on
 * MongoDB); rows with an empty `_rperm` are nobody's but the master key's. A filter written as "not
 * in" or "in" without that case gets one of them wrong. Here generated rows with every ACL shape
 * (none, empty, write-only, `*`, users, roles, inherited roles, principals nobody holds) are read
 * by several identities, and every way the library matches `_rperm` must return exactly what Parse
 * REST returns to the same user:
 *
 * - the direct PostgreSQL path, through the read tools (`aclUser`, `aclRole` and session agents);
 * - the public SQL helper, `aclReadSqlClause(agentPrincipals(context))`, run on the real table;
 * - the public Mongo helper `aclReadMatchStage` and the Mongo data path's own ACL stage, evaluated
 *   with mingo (no MongoDB server runs here) over the same rows in Parse-on-MongoDB storage shape,
 *   with the principals the agents resolved from the real role tables.
 */
const run = Date.now().toString(36);
const DOC = `AclNull_${run}`;
const PARENT = `an_parent_${run}`;
const CHILD = `an_child_${run}`;
const OTHER = `an_other_${run}`;
const GHOST_ROLE = `an_ghost_${run}`;
const GHOST_USER = `ghost${run}`;

/** A small linear congruential generator: the same rows on every run. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Who {
  name: string;
  /** Whose Parse REST answer is the truth for this agent. */
  user: SeededUser;
  /** The agent reading through the direct PostgreSQL path. */
  options: AgentOptions;
}

describe('row ACLs without _rperm: every matcher agrees with Parse REST (real Parse Server, real PostgreSQL, mingo)', () => {
  let bed: AgentTestBed;
  let db: Client;
  let alice: SeededUser;
  let bob: SeededUser;
  let carol: SeededUser;
  let dave: SeededUser;
  /** objectId -> `_rperm` as PostgreSQL stores it (null for a row without an ACL). */
  const stored = new Map<string, string[] | null>();
  const titles = new Map<string, string>();

  beforeAll(async () => {
    alice = await createUser(`an_alice_${run}`);
    bob = await createUser(`an_bob_${run}`);
    carol = await createUser(`an_carol_${run}`);
    // dave holds OTHER and nothing of his own: no ACL names him, so he reads as the role does.
    dave = await createUser(`an_dave_${run}`);
    await createRole(CHILD, { users: [bob.objectId] });
    await createRole(PARENT, { users: [alice.objectId], inheritedBy: [CHILD] });
    await createRole(OTHER, { users: [dave.objectId] });
    await defineClass(DOC, { title: { type: 'String' } });

    const universe = [
      '*',
      alice.objectId,
      bob.objectId,
      carol.objectId,
      GHOST_USER,
      `role:${PARENT}`,
      `role:${CHILD}`,
      `role:${OTHER}`,
      `role:${GHOST_ROLE}`,
    ];
    const random = prng(20261127);
    const acls: Array<Acl | undefined> = [undefined, undefined, {}, {}, { '*': { write: true } }];
    for (let i = 0; i < 55; i++) {
      const r = random();
      if (r < 0.12) {
        acls.push(undefined);
        continue;
      }
      if (r < 0.2) {
        acls.push({});
        continue;
      }
      const acl: Acl = {};
      for (const p of universe) {
        if (random() < 0.22) acl[p] = random() < 0.75 ? { read: true } : { write: true };
      }
      acls.push(acl);
    }
    for (const [i, acl] of acls.entries()) {
      const title = `${run}-${i}`;
      const id = await createObject(DOC, { title }, acl);
      titles.set(id, title);
    }

    db = new Client({ connectionString: testParseConfig().databaseURI });
    await db.connect();
    const rows = await db.query<{ objectId: string; _rperm: string[] | null }>(
      `SELECT "objectId", "_rperm" FROM "${DOC}"`,
    );
    for (const row of rows.rows) stored.set(row.objectId, row._rperm);

    bed = await createAgentTestBed([], {
      postgres: { uri: testParseConfig().databaseURI },
      unregisteredClasses: 'visible',
    });
    bed.tools.register({
      name: 'acl_null_probe',
      description: 'Rows the agent reads through its own SQL with the ACL helper.',
      handler: async (_args, context) => {
        const who = await agentPrincipals(context);
        const clause = aclReadSqlClause(who, { alias: 'd', firstParam: 2 });
        const found = await db.query<{ objectId: string }>(
          `SELECT d."objectId" FROM "${DOC}" AS d WHERE d."title" LIKE $1 AND ${clause.text}`,
          [`${run}-%`, ...clause.values],
        );
        return { who, readable: found.rows.map((r) => r.objectId).sort() };
      },
    });
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await bed?.close();
  });

  const identities = (): Who[] => [
    { name: 'alice as aclUser', user: alice, options: { aclUser: alice.objectId } },
    { name: 'bob as aclUser (inherited role)', user: bob, options: { aclUser: bob.objectId } },
    { name: 'carol as aclUser (no roles)', user: carol, options: { aclUser: carol.objectId } },
    { name: `aclRole ${OTHER} (as dave)`, user: dave, options: { aclRole: OTHER } },
    { name: 'alice by session token', user: alice, options: { sessionToken: alice.sessionToken } },
    { name: 'carol by session token', user: carol, options: { sessionToken: carol.sessionToken } },
  ];

  /** What Parse REST returns to the user: the truth. */
  async function parseReads(user: SeededUser): Promise<string[]> {
    const rows = await findRows(
      DOC,
      { title: { $regex: `^${run}-` } },
      { sessionToken: user.sessionToken },
      { limit: '1000' },
    );
    return rows.map((r) => String(r.objectId)).sort();
  }

  /** The rows in Parse-on-MongoDB storage shape: a NULL `_rperm` is a missing field there. */
  function mongoDocs(nullAs: 'missing' | 'null'): Array<Record<string, unknown>> {
    return [...stored].map(([id, rperm]) => {
      if (rperm !== null) return { _id: id, _rperm: rperm };
      return nullAs === 'missing' ? { _id: id } : { _id: id, _rperm: null };
    });
  }

  const mingoIds = (docs: Array<Record<string, unknown>>, stage: object | undefined) =>
    new Aggregator(stage ? [stage as Record<string, unknown>] : [])
      .run(docs)
      .map((d) => String((d as { _id: unknown })._id))
      .sort();

  it('the generated rows cover every _rperm shape, and Parse REST treats them as documented', async () => {
    const shapes = [...stored.values()];
    expect(shapes.filter((r) => r === null).length).toBeGreaterThanOrEqual(3);
    expect(shapes.filter((r) => Array.isArray(r) && r.length === 0).length).toBeGreaterThan(2);
    expect(shapes.some((r) => r?.includes('*'))).toBe(true);
    expect(shapes.some((r) => r?.includes(`role:${PARENT}`))).toBe(true);
    expect(shapes.some((r) => r?.includes(`role:${GHOST_ROLE}`))).toBe(true);
    const nullIds = [...stored].filter(([, r]) => r === null).map(([id]) => id);
    const emptyIds = [...stored].filter(([, r]) => r?.length === 0).map(([id]) => id);
    for (const who of identities()) {
      const truth = await parseReads(who.user);
      // No ACL: everyone reads it. An empty one: nobody but the master key.
      expect(truth).toEqual(expect.arrayContaining(nullIds));
      expect(truth.filter((id) => emptyIds.includes(id))).toEqual([]);
    }
    // Inheritance matters: bob reads the parent role's rows through his child role.
    const bobReads = await parseReads(bob);
    const parentOnly = [...stored].filter(([, r]) => r?.length === 1 && r[0] === `role:${PARENT}`);
    for (const [id] of parentOnly) expect(bobReads).toContain(id);
  });

  it('the direct PostgreSQL path returns what Parse REST returns, for each identity', async () => {
    for (const who of identities()) {
      const truth = await parseReads(who.user);
      const agent = bed.factory.create(who.options);
      // aclUser/aclRole reads go direct; a session's aggregate goes direct too (REST /aggregate is
      // master-key only), so both the row path and the pipeline path are checked.
      const where = { title: { $regex: `^${run}-` } };
      const pipeline = [{ $match: where }, { $project: { objectId: 1 } }, { $limit: 1000 }];
      const viaPipeline = ok(await agent.execute('aggregate', { class_name: DOC, pipeline }));
      const pipelineIds = (viaPipeline.results as Array<{ objectId: string }>)
        .map((r) => r.objectId)
        .sort();
      expect({ who: who.name, ids: pipelineIds }).toEqual({ who: who.name, ids: truth });
      const counted = ok(await agent.execute('count_objects', { class_name: DOC, where }));
      expect({ who: who.name, count: counted.count }).toEqual({
        who: who.name,
        count: truth.length,
      });
      if (!('sessionToken' in who.options)) {
        const rows = ok(
          await agent.execute('query_class', {
            class_name: DOC,
            where,
            keys: ['title'],
            limit: 1000,
          }),
        );
        const rowIds = (rows.results as Array<{ objectId: string }>).map((r) => r.objectId).sort();
        expect({ who: who.name, ids: rowIds }).toEqual({ who: who.name, ids: truth });
      }
    }
  });

  it('aclReadSqlClause with agentPrincipals returns what Parse REST returns, on the real table', async () => {
    for (const who of identities()) {
      const truth = await parseReads(who.user);
      const agent = bed.factory.create(who.options);
      const probe = ok(await agent.execute('acl_null_probe', {}));
      expect({ who: who.name, ids: probe.readable }).toEqual({ who: who.name, ids: truth });
    }
  });

  it('the Mongo helper and the Mongo path’s ACL stage return what Parse REST returns (mingo, storage shape)', async () => {
    const docs = mongoDocs('missing');
    for (const who of identities()) {
      const truth = await parseReads(who.user);
      const agent = bed.factory.create(who.options);
      const principals = ok(await agent.execute('acl_null_probe', {})).who as DataPrincipals as {
        master: false;
        principals: string[];
      };
      expect(principals.master).toBe(false);
      expect({ who: who.name, ids: mingoIds(docs, aclReadMatchStage(principals)) }).toEqual({
        who: who.name,
        ids: truth,
      });
      const names = ['*', ...principals.principals.filter((p) => p !== '*')];
      expect({ who: who.name, ids: mingoIds(docs, mongoPathAclStage({ names })) }).toEqual({
        who: who.name,
        ids: truth,
      });
    }
  });

  it('an explicit null _rperm on MongoDB: the helper reads it as public, as Parse does; the path’s stage never reads more than Parse', async () => {
    // Parse never writes `_rperm: null` itself, but its own read filter ({ $in: [null, ...] })
    // treats one as public. The helper follows Parse exactly; the data path's stage may only be
    // narrower (it treats an explicit null as nobody's), never wider.
    const docs = mongoDocs('null');
    for (const who of identities()) {
      const truth = await parseReads(who.user);
      const agent = bed.factory.create(who.options);
      const principals = ok(await agent.execute('acl_null_probe', {})).who as {
        principals: string[];
      };
      expect(mingoIds(docs, aclReadMatchStage({ master: false, ...principals }))).toEqual(truth);
      const path = mingoIds(docs, mongoPathAclStage({ names: ['*', ...principals.principals] }));
      expect(path.filter((id) => !truth.includes(id))).toEqual([]);
    }
  });
});
