import { lastValueFrom, toArray } from 'rxjs';
import { McpDispatcher, type ParseAgent, type ToolEnvelope } from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  pointer,
  type SeededUser,
} from '../harness/fixtures';
import { findRows, parseRest, testParseConfig } from '../harness/parse-rest';

/**
 * What a read returns never carries a row's raw ACL (it names users and roles: who can read what)
 * nor any user's `authData` (provider ids and tokens), for any identity, the master key included,
 * on any path and in any shape: rows, tables, exports, pipelines, joined rows, samples and MCP
 * resources. Against the real Parse Server and PostgreSQL; Parse REST with the master key shows
 * that the data does carry both, so a leak would be visible.
 */
const run = Date.now().toString(36);
const DOC = `AclMap_${run}`;
const ROLE = `am_role_${run}`;
const ANON_IDS = [`am-anon-one-${run}`, `am-anon-two-${run}`];

interface AnonUser {
  objectId: string;
  sessionToken: string;
}

describe('read results carry no ACL map and no authData (real Parse Server, real PostgreSQL)', () => {
  let bed: AgentTestBed;
  let dispatcher: McpDispatcher;
  let alice: SeededUser;
  /** A user named only in row ACLs: their id must never come back from a read of DOC. */
  let onlyInAcls: SeededUser;
  const anon: AnonUser[] = [];

  beforeAll(async () => {
    alice = await createUser(`am_alice_${run}`);
    onlyInAcls = await createUser(`am_acl_only_${run}`);
    for (const id of ANON_IDS) {
      anon.push(await parseRest<AnonUser>('POST', '/users', { authData: { anonymous: { id } } }));
    }
    await createRole(ROLE, { users: [alice.objectId] });
    await defineClass(DOC, {
      label: { type: 'String' },
      size: { type: 'Number' },
      owner: { type: 'Pointer', targetClass: '_User' },
    });
    for (let i = 0; i < 4; i++) {
      await createObject(
        DOC,
        { label: `row ${i}`, size: i, owner: pointer('_User', anon[i % 2].objectId) },
        {
          '*': { read: true },
          [alice.objectId]: { read: true, write: true },
          [onlyInAcls.objectId]: { read: true, write: true },
          [`role:${ROLE}`]: { read: true },
        },
      );
    }
    bed = await createAgentTestBed([], {
      unregisteredClasses: 'visible',
      postgres: { uri: testParseConfig().databaseURI },
      schemaCacheTtlMs: 600_000,
    });
    dispatcher = bed.module.get(McpDispatcher);
  }, 60_000);

  afterAll(() => bed?.close());

  const identities = (): Record<string, Record<string, string>> => ({
    'master key': {},
    'alice (session)': { sessionToken: alice.sessionToken },
    'an anonymous user (session)': { sessionToken: anon[0].sessionToken },
    'alice (aclUser)': { aclUser: alice.objectId },
    [`${ROLE} (aclRole)`]: { aclRole: ROLE },
  });

  /** Every read tool in the shapes it answers in, over DOC and over _User. */
  const readCalls = (): Array<[string, Record<string, unknown>]> => {
    const calls: Array<[string, Record<string, unknown>]> = [];
    for (const cls of [DOC, '_User']) {
      const ids = cls === DOC ? [] : [alice.objectId, ...anon.map((a) => a.objectId)];
      calls.push(
        ['query_class', { class_name: cls, limit: 50 }],
        ['query_class', { class_name: cls, limit: 50, format: 'table' }],
        ['query_class', { class_name: cls, limit: 50, format: 'csv' }],
        ['query_class', { class_name: cls, limit: 50, format: 'markdown' }],
        ['get_sample_objects', { class_name: cls }],
        ['export_data', { class_name: cls }],
        ['export_data', { class_name: cls, format: 'markdown' }],
        ['export_data', { class_name: cls, pipeline: [{ $limit: 50 }] }],
        ['aggregate', { class_name: cls, pipeline: [{ $limit: 50 }] }],
        ['aggregate', { class_name: cls, pipeline: [{ $group: { _id: null, n: { $sum: 1 } } }] }],
      );
      if (ids.length) {
        calls.push(['get_objects', { class_name: cls, ids }]);
        for (const id of ids) calls.push(['get_object', { class_name: cls, object_id: id }]);
      }
    }
    calls.push(
      ['query_class', { class_name: DOC, include: ['owner'], limit: 50 }],
      ['export_data', { class_name: DOC, include: ['owner'] }],
      [
        'aggregate',
        {
          class_name: DOC,
          pipeline: [
            { $lookup: { from: '_User', localField: 'owner', foreignField: 'objectId', as: 'u' } },
            { $limit: 50 },
          ],
        },
      ],
      ['group_by', { class_name: DOC, field: 'owner' }],
      ['distinct', { class_name: DOC, field: 'owner' }],
    );
    return calls;
  };

  async function readResource(agent: ParseAgent, uri: string): Promise<unknown> {
    const body = { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri } };
    return lastValueFrom(dispatcher.dispatch(body, agent).pipe(toArray()));
  }

  /** Strings no read may return: ACL keys and storage, authData, provider ids, the role name. */
  const forbidden = (cls: string) => [
    '"ACL"',
    '_rperm',
    '_wperm',
    '"_acl"',
    'authData',
    '_auth_data',
    ...ANON_IDS,
    ROLE,
    // The user named only in DOC's ACLs: a DOC read that shows them showed an ACL.
    ...(cls === DOC ? [onlyInAcls.objectId] : []),
  ];

  it('the data does carry them: Parse REST with the master key returns both', async () => {
    const rows = await findRows(DOC, {}, { masterKey: true });
    expect(JSON.stringify(rows)).toContain(onlyInAcls.objectId);
    expect(JSON.stringify(rows)).toContain(`role:${ROLE}`);
    const users = await findRows('_User', {}, { masterKey: true });
    for (const id of ANON_IDS) expect(JSON.stringify(users)).toContain(id);
  });

  it.each([
    'master key',
    'alice (session)',
    'an anonymous user (session)',
    'alice (aclUser)',
    `${ROLE} (aclRole)`,
  ])(
    'as %s, no read tool returns an ACL map or authData',
    async (who) => {
      const agent = bed.factory.create(identities()[who]);
      const leaks: string[] = [];
      let rowsSeen = 0;
      for (const [tool, args] of readCalls()) {
        const envelope: ToolEnvelope = await agent.execute(tool, args);
        const text = JSON.stringify(envelope);
        if (envelope.success) rowsSeen++;
        for (const needle of forbidden(String(args.class_name))) {
          if (text.includes(needle)) leaks.push(`${tool} ${JSON.stringify(args)}: ${needle}`);
        }
      }
      for (const cls of [DOC, '_User']) {
        const text = JSON.stringify(await readResource(agent, `parse://${cls}/samples`));
        for (const needle of forbidden(cls)) {
          if (text.includes(needle)) leaks.push(`resource ${cls}/samples: ${needle}`);
        }
      }
      expect(leaks).toEqual([]);
      // The calls answered: the assertions above looked at rows, not only at refusals.
      expect(rowsSeen).toBeGreaterThan(readCalls().length / 2);
    },
    60_000,
  );

  it('the master key reads every user, the anonymous ones included, without their authData', async () => {
    const agent = bed.factory.create({});
    const envelope = await agent.execute('get_objects', {
      class_name: '_User',
      ids: anon.map((a) => a.objectId),
    });
    expect(envelope.success).toBe(true);
    const objects = (envelope as { data: { objects: Record<string, Record<string, unknown>> } })
      .data.objects;
    expect(Object.keys(objects).sort()).toEqual(anon.map((a) => a.objectId).sort());
    for (const row of Object.values(objects)) {
      expect(row).not.toHaveProperty('authData');
      expect(row).not.toHaveProperty('ACL');
    }
  });
});
