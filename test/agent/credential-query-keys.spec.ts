import type { ToolEnvelope } from 'nestjs-parse-agent';
import { INTERNAL_FIELDS } from 'nestjs-parse-agent/data';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  pointer,
  type SeededUser,
} from '../harness/fixtures';
import { parseRest, testParseConfig } from '../harness/parse-rest';

/**
 * A credential column used as a query key is an oracle even when its value never comes back: a
 * count, a group, a sort order or a boolean that depends on `_hashed_password` bisects the hash.
 * Every read tool is called with every credential and bookkeeping name in every position that
 * names a field (where, order, keys, include, group and distinct fields, value fields, columns,
 * `$match`, `$expr`, `$group` keys and accumulators, `$sort`, `$project`, `$addFields`, `$lookup`
 * local and foreign fields, fields of a joined row, `$facet`, `$$ROOT.`/`$$CURRENT.` paths and
 * `$getField`), as a master-key, a session-token, an aclUser and an aclRole agent, on the real
 * Parse Server and PostgreSQL (Parse REST and the direct PostgreSQL path). Each must be refused by
 * the library before anything reaches a data path; the same call with an ordinary field works.
 */
const run = Date.now().toString(36);
const VAULT = `CredKeys_${run}`;
const ROLE = `ck_role_${run}`;

/**
 * The credential names: Parse's credential and bookkeeping columns written out here (so a name
 * dropped from the library's floor fails this suite), the floor itself (INTERNAL_FIELDS), and
 * dotted paths into them. `password` and `ACL` are checked separately below: they are not in
 * INTERNAL_FIELDS yet (see the last test).
 */
const CREDENTIAL_KEYS = [
  ...new Set([
    '_hashed_password',
    '_password_history',
    '_session_token',
    '_sessionToken',
    'sessionToken',
    'session_token',
    'authData',
    '_auth_data',
    '_auth_data_anonymous',
    '_email_verify_token',
    '_email_verify_token_expires_at',
    '_perishable_token',
    '_perishable_token_expires_at',
    '_failed_login_count',
    '_account_lockout_expires_at',
    '_rperm',
    '_wperm',
    '_acl',
    '_tombstone',
    'deviceToken',
    ...INTERNAL_FIELDS,
    '_auth_data_anonymous.id',
    'authData.anonymous.id',
    'authData.anonymous',
  ]),
];

type Call = [tool: string, position: string, args: Record<string, unknown>];

/** Every position a read tool takes a field name in, for class `cls` and field `key`. */
function callsNaming(cls: string, key: string): Call[] {
  const ref = `$${key}`;
  const exists = { [key]: { $exists: true } };
  return [
    ['query_class', 'where', { class_name: cls, where: exists }],
    ['query_class', 'where $regex', { class_name: cls, where: { [key]: { $regex: '^x' } } }],
    ['query_class', 'where $or', { class_name: cls, where: { $or: [exists, { objectId: 'x' }] } }],
    ['query_class', 'order', { class_name: cls, order: key }],
    ['query_class', 'order desc', { class_name: cls, order: `-${key}` }],
    ['query_class', 'keys', { class_name: cls, keys: [key] }],
    ['query_class', 'include', { class_name: cls, include: [key] }],
    ['count_objects', 'where', { class_name: cls, where: exists }],
    ['count_objects', 'where $gt', { class_name: cls, where: { [key]: { $gt: 'm' } } }],
    ['get_object', 'include', { class_name: cls, object_id: 'x', include: [key] }],
    ['get_objects', 'include', { class_name: cls, ids: ['x'], include: [key] }],
    ['explain_query', 'where', { class_name: cls, where: exists }],
    ['explain_query', 'order', { class_name: cls, order: key }],
    ['group_by', 'field', { class_name: cls, field: key }],
    [
      'group_by',
      'value_field',
      { class_name: cls, field: 'objectId', operation: 'max', value_field: key },
    ],
    ['group_by', 'where', { class_name: cls, field: 'objectId', where: exists }],
    ['group_by_date', 'field', { class_name: cls, field: key, interval: 'day' }],
    [
      'group_by_date',
      'where',
      { class_name: cls, field: 'createdAt', interval: 'day', where: exists },
    ],
    ['distinct', 'field', { class_name: cls, field: key }],
    ['distinct', 'where', { class_name: cls, field: 'objectId', where: exists }],
    ['aggregate', '$match', { class_name: cls, pipeline: [{ $match: exists }, { $count: 'n' }] }],
    [
      'aggregate',
      '$match $expr',
      { class_name: cls, pipeline: [{ $match: { $expr: { $gt: [ref, 'm'] } } }, { $count: 'n' }] },
    ],
    ['aggregate', '$group _id', { class_name: cls, pipeline: [{ $group: { _id: ref } }] }],
    [
      'aggregate',
      '$group $sum $cond',
      {
        class_name: cls,
        pipeline: [{ $group: { _id: null, n: { $sum: { $cond: [{ $gt: [ref, 'm'] }, 1, 0] } } } }],
      },
    ],
    [
      'aggregate',
      '$group $max',
      { class_name: cls, pipeline: [{ $group: { _id: null, m: { $max: ref } } }] },
    ],
    ['aggregate', '$sort', { class_name: cls, pipeline: [{ $sort: { [key]: 1 } }, { $limit: 1 }] }],
    ['aggregate', '$project', { class_name: cls, pipeline: [{ $project: { v: ref } }] }],
    [
      'aggregate',
      '$addFields',
      { class_name: cls, pipeline: [{ $addFields: { v: ref } }, { $match: { v: 'x' } }] },
    ],
    ['aggregate', '$sortByCount', { class_name: cls, pipeline: [{ $sortByCount: ref }] }],
    [
      'aggregate',
      '$lookup localField',
      {
        class_name: cls,
        pipeline: [
          { $lookup: { from: '_User', localField: key, foreignField: 'objectId', as: 'j' } },
        ],
      },
    ],
    [
      'aggregate',
      '$lookup foreignField',
      {
        class_name: cls,
        pipeline: [
          { $lookup: { from: '_User', localField: 'objectId', foreignField: key, as: 'j' } },
        ],
      },
    ],
    [
      'aggregate',
      'joined row field',
      {
        class_name: VAULT,
        pipeline: [
          { $lookup: { from: '_User', localField: 'owner', foreignField: 'objectId', as: 'j' } },
          { $match: { [`j.${key}`]: { $exists: true } } },
        ],
      },
    ],
    [
      'aggregate',
      '$facet',
      { class_name: cls, pipeline: [{ $facet: { a: [{ $match: exists }, { $count: 'n' }] } }] },
    ],
    [
      'aggregate',
      '$$ROOT path',
      {
        class_name: cls,
        pipeline: [{ $match: { $expr: { $gt: [`$$ROOT.${key}`, 'm'] } } }, { $count: 'n' }],
      },
    ],
    [
      'aggregate',
      '$$CURRENT path',
      { class_name: cls, pipeline: [{ $project: { v: `$$CURRENT.${key}` } }] },
    ],
    [
      'aggregate',
      '$getField',
      { class_name: cls, pipeline: [{ $project: { v: { $getField: key } } }] },
    ],
    [
      'aggregate',
      '$getField $literal on $$ROOT',
      {
        class_name: cls,
        pipeline: [
          { $project: { v: { $getField: { field: { $literal: key }, input: '$$ROOT' } } } },
        ],
      },
    ],
    ['export_data', 'where', { class_name: cls, where: exists }],
    ['export_data', 'keys', { class_name: cls, keys: [key] }],
    ['export_data', 'columns', { class_name: cls, columns: [key] }],
    ['export_data', 'order', { class_name: cls, order: key }],
    ['export_data', 'pipeline $match', { class_name: cls, pipeline: [{ $match: exists }] }],
  ];
}

/** Positions whose call with an ordinary field must work on every path (the control). */
const PORTABLE = new Set([
  'query_class where',
  'query_class where $or',
  'query_class order',
  'query_class keys',
  'count_objects where',
  'explain_query where',
  'group_by field',
  'group_by where',
  'distinct field',
  'aggregate $match',
  'aggregate $group _id',
  'aggregate $sort',
  'aggregate $project',
  'export_data where',
  'export_data keys',
  'export_data columns',
  'export_data order',
  'export_data pipeline $match',
]);

/** Refusals the library gives itself (Parse Server's own refusals are `parse_error`). */
const LIBRARY_REFUSALS = new Set([
  'access_denied',
  'security_blocked',
  'invalid_argument',
  'invalid_query',
]);

describe('credential columns as query keys: refused by every read tool on every path (real Parse Server, real PostgreSQL)', () => {
  let bed: AgentTestBed;
  let alice: SeededUser;
  let bob: SeededUser;
  const identities: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    alice = await createUser(`ck_alice_${run}`, 'alice-password');
    bob = await createUser(`ck_bob_${run}`, 'a-different-password');
    await parseRest('POST', '/users', { authData: { anonymous: { id: `ck-anon-${run}` } } });
    await createRole(ROLE, { users: [alice.objectId] });
    await defineClass(VAULT, {
      label: { type: 'String' },
      owner: { type: 'Pointer', targetClass: '_User' },
    });
    await createObject(VAULT, { label: 'a', owner: pointer('_User', alice.objectId) });
    await createObject(VAULT, { label: 'b', owner: pointer('_User', bob.objectId) });
    bed = await createAgentTestBed([], {
      unregisteredClasses: 'visible',
      postgres: { uri: testParseConfig().databaseURI },
      // Thousands of calls on classes that do not change during the suite.
      schemaCacheTtlMs: 600_000,
    });
    identities['master key'] = {};
    identities['session token'] = { sessionToken: alice.sessionToken };
    identities.aclUser = { aclUser: alice.objectId };
    identities.aclRole = { aclRole: ROLE };
  }, 60_000);

  afterAll(() => bed?.close());

  const control = { _User: 'username', [VAULT]: 'label' } as Record<string, string>;

  it.each(['master key', 'session token', 'aclUser', 'aclRole'])(
    'as a %s agent: every credential name in every position is refused by the library',
    async (who) => {
      const agent = bed.factory.create(identities[who]);
      const answered: string[] = [];
      let controls = 0;
      for (const cls of ['_User', VAULT]) {
        for (const [tool, position, args] of callsNaming(cls, control[cls])) {
          if (!PORTABLE.has(`${tool} ${position}`)) continue;
          const envelope = await agent.execute(tool, args);
          expect({ cls, tool, position, success: envelope.success, envelope }).toMatchObject({
            success: true,
          });
          controls++;
        }
        for (const key of CREDENTIAL_KEYS) {
          for (const [tool, position, args] of callsNaming(cls, key)) {
            const envelope: ToolEnvelope = await agent.execute(tool, args);
            if (envelope.success || !LIBRARY_REFUSALS.has(String(envelope.error_code))) {
              answered.push(
                `${cls} ${tool} ${position} ${key}: ${envelope.success ? 'answered' : envelope.error_code}`,
              );
            }
          }
        }
      }
      expect(controls).toBeGreaterThanOrEqual(PORTABLE.size * 2 - 2);
      expect(answered).toEqual([]);
    },
    120_000,
  );

  it('password and ACL (not in INTERNAL_FIELDS yet): no answer depends on the stored hash', async () => {
    // bcrypt hashes start with $2a$ or $2b$; were `password` ever matched against the hash, one of
    // these prefixes would count every user with a password. Each position must either be refused
    // or answer the same whatever the prefix.
    const prefixes = ['^\\$2a\\$', '^\\$2b\\$', '^\\$2y\\$', '^zz'];
    const positions = (prefix: string): Call[] => [
      ['count_objects', 'where', { class_name: '_User', where: { password: { $regex: prefix } } }],
      [
        'query_class',
        'where',
        { class_name: '_User', where: { password: { $regex: prefix } }, keys: ['username'] },
      ],
      [
        'aggregate',
        '$match',
        {
          class_name: '_User',
          pipeline: [{ $match: { password: { $regex: prefix } } }, { $count: 'n' }],
        },
      ],
      [
        'group_by',
        'where',
        { class_name: '_User', field: 'objectId', where: { password: { $regex: prefix } } },
      ],
      [
        'count_objects',
        'where ACL',
        { class_name: VAULT, where: { ACL: { $regex: prefix.replace('\\$2', '') } } },
      ],
    ];
    for (const who of Object.keys(identities)) {
      const agent = bed.factory.create(identities[who]);
      for (let i = 0; i < positions('').length; i++) {
        const answers = new Set<string>();
        for (const prefix of prefixes) {
          const [tool, position, args] = positions(prefix)[i];
          const envelope = await agent.execute(tool, args);
          answers.add(
            envelope.success
              ? JSON.stringify({ position, data: envelope.data }).replace(/\^[^"]*"/g, '"')
              : 'refused',
          );
        }
        expect({ who, position: positions('')[i][1], answers: [...answers].length }).toEqual({
          who,
          position: positions('')[i][1],
          answers: 1,
        });
      }
    }
  });
});
