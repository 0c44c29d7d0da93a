import { Client } from 'pg';
import type { ParseAgent, PolicedToolContext } from 'nestjs-parse-agent';
import {
  aclReadSqlClause,
  aclWriteSqlClause,
  agentPrincipals,
  refreshAgentPrincipals,
} from 'nestjs-parse-agent/auth';
import type { DataPrincipals } from 'nestjs-parse-agent/data';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok } from '../harness/envelopes';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  pointer,
  type Acl,
  type SeededUser,
} from '../harness/fixtures';
import { findRows, parseRest, testParseConfig } from '../harness/parse-rest';

/**
 * The ACL helpers a custom tool uses on the PostgreSQL path, against the real Parse Server and
 * PostgreSQL: the rows its own SQL returns with `aclReadSqlClause(agentPrincipals(context))` are the
 * rows Parse REST returns to the same user; the write clause keeps the rows Parse lets that user
 * update; `refreshAgentPrincipals` picks up a role granted at run time.
 */
const run = Date.now().toString(36);
const DOC = `AhDoc_${run}`;
const STAFF = `ah_staff_${run}`;
const BOSS = `ah_boss_${run}`;
const master = { masterKey: true } as const;

describe('ACL helpers for custom tools (real Parse Server, real PostgreSQL)', () => {
  let bed: AgentTestBed;
  let db: Client;
  let alice: SeededUser;
  let bob: SeededUser;
  let carol: SeededUser;
  let dave: SeededUser;
  let staffRoleId: string;
  let allIds: string[];

  /** The custom tool: the agent's principals and the rows its own SQL finds with the clauses. */
  async function probe(context: PolicedToolContext) {
    const who = await agentPrincipals(context);
    const rows = async (clause: { text: string; values: unknown[] }) =>
      (
        await db.query<{ objectId: string }>(
          `SELECT d."objectId" FROM "${DOC}" AS d WHERE d."title" LIKE $1 AND ${clause.text} ORDER BY 1`,
          [`${run}%`, ...clause.values],
        )
      ).rows.map((r) => r.objectId);
    return {
      who,
      readable: await rows(aclReadSqlClause(who, { alias: 'd', firstParam: 2 })),
      writable: await rows(aclWriteSqlClause(who, { alias: 'd', firstParam: 2 })),
    };
  }

  const call = async (agent: ParseAgent, tool = 'acl_probe') =>
    ok(await agent.execute(tool, {})) as {
      who: DataPrincipals;
      readable: string[];
      writable: string[];
    };

  /** What Parse REST returns to a session: the oracle. */
  const restReadable = async (token: string) =>
    (
      await findRows(
        DOC,
        { title: { $regex: `^${run}` } },
        { sessionToken: token },
        { limit: '1000' },
      )
    )
      .map((r) => r.objectId as string)
      .sort();

  /** The rows Parse lets a session update, found by trying a harmless update of each row. */
  async function restWritable(token: string): Promise<string[]> {
    const out: string[] = [];
    for (const id of allIds) {
      try {
        await parseRest('PUT', `/classes/${DOC}/${id}`, { touched: true }, { sessionToken: token });
        out.push(id);
      } catch {
        // refused by the row's ACL (Parse answers "not found")
      }
    }
    return out.sort();
  }

  beforeAll(async () => {
    alice = await createUser(`ah_alice_${run}`);
    bob = await createUser(`ah_bob_${run}`);
    carol = await createUser(`ah_carol_${run}`);
    dave = await createUser(`ah_dave_${run}`);
    staffRoleId = await createRole(STAFF, { users: [bob.objectId, dave.objectId] });
    // Members of STAFF inherit BOSS's access.
    await createRole(BOSS, { inheritedBy: [STAFF] });
    await defineClass(DOC, {
      title: { type: 'String' },
      touched: { type: 'Boolean' },
      owner: { type: 'Pointer', targetClass: '_User' },
    });
    const rows: Array<[string, Acl | undefined]> = [
      ['no-acl', undefined],
      ['public-read', { '*': { read: true } }],
      ['public-rw', { '*': { read: true, write: true } }],
      ['alice', { [alice.objectId]: { read: true, write: true } }],
      [
        'alice-reads-bob-writes',
        { [alice.objectId]: { read: true }, [bob.objectId]: { write: true } },
      ],
      ['staff', { [`role:${STAFF}`]: { read: true, write: true } }],
      ['boss-read', { [`role:${BOSS}`]: { read: true } }],
      ['boss-write', { [`role:${BOSS}`]: { write: true }, '*': { read: true } }],
      ['bob', { [bob.objectId]: { read: true } }],
      ['nobody', {}],
    ];
    allIds = [];
    for (const [name, acl] of rows) {
      allIds.push(
        await createObject(
          DOC,
          { title: `${run}-${name}`, owner: pointer('_User', alice.objectId) },
          acl,
        ),
      );
    }
    allIds.sort();
    db = new Client({ connectionString: testParseConfig().databaseURI });
    await db.connect();
    bed = await createAgentTestBed([], {
      postgres: { uri: testParseConfig().databaseURI },
      unregisteredClasses: 'visible',
    });
    bed.tools.register({
      name: 'acl_probe',
      description: 'ACL helper probe.',
      handler: (_a, c) => probe(c),
    });
    bed.tools.register({
      name: 'acl_refresh',
      description: 'Refreshes the agent’s principals, then probes.',
      handler: async (_a, c) => {
        await refreshAgentPrincipals(c);
        return probe(c);
      },
    });
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await bed?.close();
  });

  it('session agents: the SQL with the read clause returns exactly what Parse REST returns', async () => {
    for (const user of [alice, bob, carol]) {
      const data = await call(bed.factory.create({ sessionToken: user.sessionToken }));
      expect(data.who).toMatchObject({ master: false });
      expect(data.readable).toEqual(await restReadable(user.sessionToken));
    }
    // The oracle is not trivial: users see different rows, and nobody sees every row.
    expect(await restReadable(alice.sessionToken)).not.toEqual(
      await restReadable(bob.sessionToken),
    );
    expect((await restReadable(bob.sessionToken)).length).toBeLessThan(allIds.length);
  });

  it("an aclUser agent reads through the clause what the same user's session reads, roles inherited", async () => {
    const data = await call(bed.factory.create({ aclUser: bob.objectId }));
    expect(data.who).toEqual({
      master: false,
      principals: expect.arrayContaining(['*', bob.objectId, `role:${STAFF}`, `role:${BOSS}`]),
    });
    expect(data.readable).toEqual(await restReadable(bob.sessionToken));
  });

  it('an aclRole agent reads what a member with no rows of its own reads', async () => {
    const data = await call(bed.factory.create({ aclRole: STAFF }));
    expect(data.who).toEqual({
      master: false,
      principals: expect.arrayContaining(['*', `role:${STAFF}`, `role:${BOSS}`]),
    });
    expect((data.who as { principals: string[] }).principals).not.toContain(dave.objectId);
    expect(data.readable).toEqual(await restReadable(dave.sessionToken));
  });

  it('the write clause keeps exactly the rows Parse lets the user update', async () => {
    for (const user of [alice, bob]) {
      const data = await call(bed.factory.create({ aclUser: user.objectId }));
      expect(data.writable).toEqual(await restWritable(user.sessionToken));
    }
  });

  it('a master-key agent gets no filter: every row', async () => {
    const data = await call(bed.factory.create({}));
    expect(data.who).toEqual({ master: true });
    expect(data.readable).toEqual(allIds);
  });

  it('refreshAgentPrincipals picks up a role granted at run time; cached principals do not', async () => {
    const agent = bed.factory.create({ aclUser: carol.objectId });
    const before = await call(agent);
    expect((before.who as { principals: string[] }).principals).not.toContain(`role:${STAFF}`);
    await parseRest(
      'PUT',
      `/roles/${staffRoleId}`,
      { users: { __op: 'AddRelation', objects: [pointer('_User', carol.objectId)] } },
      master,
    );
    // Role expansions are cached for a short time: without a refresh the old principals stay.
    const cached = await call(agent);
    expect(cached.who).toEqual(before.who);
    const refreshed = await call(agent, 'acl_refresh');
    expect((refreshed.who as { principals: string[] }).principals).toEqual(
      expect.arrayContaining([`role:${STAFF}`, `role:${BOSS}`]),
    );
    expect(refreshed.readable).toEqual(await restReadable(carol.sessionToken));
    expect(refreshed.readable).not.toEqual(before.readable);
  });
});
