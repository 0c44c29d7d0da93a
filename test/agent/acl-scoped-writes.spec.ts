import {
  AgentMethod,
  AgentVisible,
  ParseClass,
  type AgentMethodContext,
  type MutationEvent,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { createObject, createRole, createUser, defineClass, pointer } from '../harness/fixtures';
import { findRows, parseRest, testParseConfig } from '../harness/parse-rest';

/**
 * Writes by aclRole and aclUser agents on a real Parse Server (PostgreSQL): they have no session, so
 * the library checks the class's CLP and the row's ACL for their principals, then writes with the
 * master key. Every refusal is checked through Parse with the master key: the row is unchanged.
 */
const run = Date.now().toString(36);
const NOTE = `AwNote_${run}`;
const LOCKED = `AwLocked_${run}`;
const OWNED = `AwOwned_${run}`;
const WRITER = `aw_writer_${run}`;
const LEAD = `aw_lead_${run}`;
const OTHER = `aw_other_${run}`;
const GATES = ['PARSE_AGENT_ALLOW_WRITE_TOOLS', 'PARSE_AGENT_ALLOW_RAW_CRUD'] as const;
const master = { masterKey: true } as const;

@ParseClass(NOTE)
@AgentVisible()
class Note {
  title?: string;

  @AgentMethod({
    permission: 'write',
    description: 'Give this note a new title.',
    parameters: {
      type: 'object',
      properties: { title: { type: 'string' } },
      required: ['title'],
      additionalProperties: false,
    },
  })
  async retitle(args: { title: string }, ctx: AgentMethodContext) {
    await ctx.data.update!(NOTE, ctx.objectId!, { title: args.title }, ctx.signal);
    return { retitled: ctx.objectId };
  }

  @AgentMethod({
    permission: 'write',
    description: 'Create a note in the locked class (its CLP refuses everyone).',
  })
  static async stampLocked(_args: Record<string, never>, ctx: AgentMethodContext) {
    return ctx.data.create!(LOCKED, { title: 'from a method' }, ctx.signal);
  }
}

@ParseClass(LOCKED)
@AgentVisible()
class Locked {}

@ParseClass(OWNED)
@AgentVisible()
class Owned {}

const row = (className: string, objectId: string) =>
  parseRest<Data>('GET', `/classes/${className}/${objectId}`, undefined, master);

describe('aclRole / aclUser writes (real Parse Server, real PostgreSQL)', () => {
  let bed: AgentTestBed;
  let writer: ParseAgent;
  let mutations: MutationEvent[];
  let writable: string;
  let inherited: string;
  let readOnly: string;
  let hidden: string;
  let lockedRow: string;
  let member: { objectId: string };
  let outsider: { objectId: string };
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    for (const g of GATES) {
      saved[g] = process.env[g];
      process.env[g] = 'true';
    }
    member = await createUser(`aw_member_${run}`);
    outsider = await createUser(`aw_outsider_${run}`);
    await createRole(WRITER, { users: [member.objectId] });
    // Members of WRITER inherit LEAD's access (WRITER is a child role of LEAD).
    await createRole(LEAD, { inheritedBy: [WRITER] });
    await createRole(OTHER, { users: [outsider.objectId] });

    const open = { '*': true };
    await defineClass(
      NOTE,
      { title: { type: 'String' }, n: { type: 'Number' } },
      {
        find: open,
        get: open,
        count: open,
        create: { [`role:${WRITER}`]: true },
        update: { [`role:${LEAD}`]: true },
        delete: { [`role:${OTHER}`]: true },
        addField: {},
      },
    );
    await defineClass(
      LOCKED,
      { title: { type: 'String' } },
      { find: open, get: open, count: open, create: {}, update: {}, delete: {}, addField: {} },
    );
    await defineClass(
      OWNED,
      { title: { type: 'String' }, owner: { type: 'Pointer', targetClass: '_User' } },
      {
        find: open,
        get: open,
        count: open,
        create: {},
        update: { pointerFields: ['owner'] },
        delete: {},
        addField: {},
      },
    );
    const readAll = { '*': { read: true } };
    writable = await createObject(
      NOTE,
      { title: 'writable', n: 1 },
      { ...readAll, [`role:${WRITER}`]: { read: true, write: true } },
    );
    inherited = await createObject(
      NOTE,
      { title: 'inherited', n: 2 },
      { ...readAll, [`role:${LEAD}`]: { read: true, write: true } },
    );
    readOnly = await createObject(NOTE, { title: 'read-only', n: 3 }, readAll);
    hidden = await createObject(
      NOTE,
      { title: 'hidden', n: 4 },
      { [`role:${OTHER}`]: { read: true, write: true } },
    );
    lockedRow = await createObject(
      LOCKED,
      { title: 'locked' },
      { ...readAll, [`role:${WRITER}`]: { read: true, write: true } },
    );

    bed = await createAgentTestBed([Note, Locked, Owned], {
      postgres: { uri: testParseConfig().databaseURI },
    });
    mutations = [];
    bed.events.mutations$.subscribe((m) => mutations.push(m));
    writer = bed.factory.create({
      aclRole: WRITER,
      permissions: 'admin',
      allowMutations: true,
      confirmationRequired: false,
    });
  }, 60_000);

  afterAll(async () => {
    for (const g of GATES) {
      if (saved[g] === undefined) delete process.env[g];
      else process.env[g] = saved[g];
    }
    await bed?.close();
  });

  it('offers the raw write tools to an ACL-scoped agent once a path can check its writes', () => {
    expect(writer.allowedTools()).toEqual(
      expect.arrayContaining(['create_object', 'update_object', 'delete_object']),
    );
  });

  it('creates where the CLP grants create to the role', async () => {
    const data = ok(
      await writer.execute('create_object', {
        class_name: NOTE,
        values: { title: 'made by the role', n: 10 },
      }),
    );
    const stored = await row(NOTE, data.object_id);
    expect(stored).toMatchObject({ title: 'made by the role', n: 10 });
    expect(mutations.at(-1)).toMatchObject({ action: 'create', object_id: data.object_id });
  });

  it('updates a row whose ACL gives the role write access, and one shared with a role it inherits', async () => {
    ok(
      await writer.execute('update_object', {
        class_name: NOTE,
        object_id: writable,
        values: { title: 'changed' },
      }),
    );
    expect((await row(NOTE, writable)).title).toBe('changed');
    ok(
      await writer.execute('update_object', {
        class_name: NOTE,
        object_id: inherited,
        values: { n: 20 },
      }),
    );
    expect((await row(NOTE, inherited)).n).toBe(20);
  });

  it("refuses an update the row's ACL denies, naming the ACL, and leaves the row unchanged", async () => {
    const before = await row(NOTE, readOnly);
    const result = refused(
      await writer.execute('update_object', {
        class_name: NOTE,
        object_id: readOnly,
        values: { title: 'should not land' },
      }),
    );
    expect(result.error_code).toBe('access_denied');
    expect(result.details).toMatchObject({ kind: 'acl_denied' });
    expect(result.error).toContain("row's ACL");
    expect(result.error).toContain(`role:${WRITER}`);
    expect(result.error).not.toContain('class-level');
    const after = await row(NOTE, readOnly);
    expect(after.title).toBe('read-only');
    expect(after.updatedAt).toBe(before.updatedAt);
  });

  it('cannot touch a row its reads do not find (no read access): not found, unchanged', async () => {
    const result = refused(
      await writer.execute('update_object', {
        class_name: NOTE,
        object_id: hidden,
        values: { title: 'should not land' },
      }),
    );
    expect(result.error).toContain('not found');
    expect((await row(NOTE, hidden)).title).toBe('hidden');
  });

  it('refuses a delete the CLP denies, naming the CLP, and the row stays', async () => {
    const result = refused(
      await writer.execute('delete_object', { class_name: NOTE, object_id: writable }),
    );
    expect(result.details).toMatchObject({ kind: 'clp_denied' });
    expect(result.error).toContain('class-level permissions (CLP)');
    expect(result.error).toContain("'delete'");
    expect((await row(NOTE, writable)).objectId).toBe(writable);
  });

  it('refuses a delete before asking anyone to confirm it when the CLP would refuse it', async () => {
    const asking = bed.factory.create({
      aclRole: WRITER,
      permissions: 'admin',
      allowMutations: true,
    });
    let asked = 0;
    const result = refused(
      await asking.execute(
        'delete_object',
        { class_name: NOTE, object_id: writable },
        {
          elicitation: {
            elicit: async () => {
              asked++;
              return { action: 'accept', content: { confirm: true } };
            },
          },
        },
      ),
    );
    expect(result.details).toMatchObject({ kind: 'clp_denied' });
    expect(asked).toBe(0);
    expect((await row(NOTE, writable)).objectId).toBe(writable);
  });

  it('refuses create and update in a class whose CLP grants nobody, even where the ACL would allow', async () => {
    const created = refused(
      await writer.execute('create_object', { class_name: LOCKED, values: { title: 'nope' } }),
    );
    expect(created.details).toMatchObject({ kind: 'clp_denied' });
    expect(await findRows(LOCKED, {}, master)).toHaveLength(1);
    const updated = refused(
      await writer.execute('update_object', {
        class_name: LOCKED,
        object_id: lockedRow,
        values: { title: 'nope' },
      }),
    );
    expect(updated.details).toMatchObject({ kind: 'clp_denied' });
    expect((await row(LOCKED, lockedRow)).title).toBe('locked');
  });

  it('deletes when the CLP and the row ACL both allow it (after the gates and confirmation settings)', async () => {
    const deleter = bed.factory.create({
      aclRole: OTHER,
      permissions: 'admin',
      allowMutations: true,
      confirmationRequired: false,
    });
    const target = await createObject(
      NOTE,
      { title: 'to delete' },
      { '*': { read: true }, [`role:${OTHER}`]: { read: true, write: true } },
    );
    ok(await deleter.execute('delete_object', { class_name: NOTE, object_id: target }));
    await expect(row(NOTE, target)).rejects.toThrow();
    // Still gated: without allowMutations the raw tools are refused before any check.
    const gated = bed.factory.create({ aclRole: OTHER, permissions: 'admin' });
    const result = refused(
      await gated.execute('delete_object', { class_name: NOTE, object_id: readOnly }),
    );
    expect(result.error).toContain('allowMutations');
    expect((await row(NOTE, readOnly)).objectId).toBe(readOnly);
  });

  it("checks an agent method's ctx.data writes the same way", async () => {
    const data = ok(
      await writer.execute('call_method', {
        class_name: NOTE,
        method_name: 'retitle',
        object_id: inherited,
        arguments: { title: 'via method' },
      }),
    );
    expect(data).toBeDefined();
    expect((await row(NOTE, inherited)).title).toBe('via method');

    const denied = refused(
      await writer.execute('call_method', {
        class_name: NOTE,
        method_name: 'retitle',
        object_id: readOnly,
        arguments: { title: 'via method' },
      }),
    );
    expect(denied.error).toContain("row's ACL");
    expect((await row(NOTE, readOnly)).title).toBe('read-only');

    const locked = refused(
      await writer.execute('call_method', { class_name: NOTE, method_name: 'stampLocked' }),
    );
    expect(locked.error).toContain('class-level permissions (CLP)');
    expect(await findRows(LOCKED, {}, master)).toHaveLength(1);
  });

  it('never lets an ACL-scoped agent change the schema', async () => {
    process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS = 'true';
    process.env.PARSE_AGENT_ALLOW_RAW_SCHEMA = 'true';
    try {
      const scratch = `AwScratch_${run}`;
      const result = refused(
        await writer.execute('create_class', {
          class_name: scratch,
          fields: { label: { type: 'String' } },
        }),
      );
      expect(result.error_code).toBe('access_denied');
      await expect(parseRest('GET', `/schemas/${scratch}`, undefined, master)).rejects.toThrow();
    } finally {
      delete process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS;
      delete process.env.PARSE_AGENT_ALLOW_RAW_SCHEMA;
    }
  });

  describe('aclUser and pointer permissions', () => {
    let mine: string;
    let theirs: string;

    beforeAll(async () => {
      const everyone = { '*': { read: true, write: true } };
      mine = await createObject(
        OWNED,
        { title: 'mine', owner: pointer('_User', member.objectId) },
        everyone,
      );
      theirs = await createObject(
        OWNED,
        { title: 'theirs', owner: pointer('_User', outsider.objectId) },
        everyone,
      );
    });

    it('an aclUser agent acts with its roles (inheritance included) and its own id', async () => {
      const user = bed.factory.create({
        aclUser: member.objectId,
        permissions: 'write',
        allowMutations: true,
      });
      ok(
        await user.execute('update_object', {
          class_name: NOTE,
          object_id: inherited,
          values: { n: 30 },
        }),
      );
      expect((await row(NOTE, inherited)).n).toBe(30);
      ok(
        await user.execute('update_object', {
          class_name: OWNED,
          object_id: mine,
          values: { title: 'still mine' },
        }),
      );
      expect((await row(OWNED, mine)).title).toBe('still mine');
      const result = refused(
        await user.execute('update_object', {
          class_name: OWNED,
          object_id: theirs,
          values: { title: 'taken' },
        }),
      );
      expect(result.details).toMatchObject({ kind: 'clp_denied' });
      expect(result.error).toContain("'owner'");
      expect((await row(OWNED, theirs)).title).toBe('theirs');
    });

    it('an aclRole agent acts for no user, so pointer permissions never grant it a write', async () => {
      const result = refused(
        await writer.execute('update_object', {
          class_name: OWNED,
          object_id: mine,
          values: { title: 'by the role' },
        }),
      );
      expect(result.details).toMatchObject({ kind: 'clp_denied' });
      expect(result.error).toContain('acts for no user');
      expect((await row(OWNED, mine)).title).toBe('still mine');
    });
  });
});
