import { Logger } from '@nestjs/common';
import {
  AgentCanonicalFilter,
  AgentField,
  AgentFields,
  AgentTenantScope,
  AgentVisible,
  BelongsTo,
  ParseClass,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { DeclaredNamesReporter } from 'nestjs-parse-agent/nest/declared-names.reporter';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { createObject, createUser, defineClass, pointer } from '../harness/fixtures';
import { findRows, testParseConfig, type RestAuth } from '../harness/parse-rest';

/**
 * Field names as models declare them (properties mapped with @AgentField({ field }) or
 * @BelongsTo({ field }), snake_case names of camelCase columns) against a real Parse Server on
 * PostgreSQL: the tenant scope, the allowlist, the canonical filter and the agent's filters all
 * mean the column, on every path, and answer what Parse REST answers for the same user and the
 * same column filter. A declared name that is no column is reported at start-up and refused with
 * the real fields, never answered with an empty result.
 */
const run = Date.now().toString(36);
const ACCT = `DnAcct_${run}`;
const PERSON = `DnPerson_${run}`;
const BAD_TENANT = `DnBadTenant_${run}`;
const BAD_NAMES = `DnBadNames_${run}`;
const PUBLIC = { '*': { read: true } };

@ParseClass(PERSON)
@AgentVisible()
class Person {}

@ParseClass(ACCT)
@AgentVisible()
@AgentTenantScope('org', { bypass: (agent) => agent.usingMasterKey && !agent.tenantId })
@AgentFields('org', 'name', 'amount', 'sold_at', 'owner', 'archived')
@AgentCanonicalFilter({ archived: { $ne: true } })
class Acct {
  @AgentField({ field: 'org_ref', description: 'The organisation that owns the account' })
  org?: string;

  @BelongsTo(() => Person, { field: 'owner_ref' })
  owner?: unknown;
}

@ParseClass(BAD_TENANT)
@AgentVisible()
@AgentTenantScope('tenant')
class BadTenant {}

@ParseClass(BAD_NAMES)
@AgentVisible()
@AgentFields('title', 'nickname')
@AgentCanonicalFilter({ deleted: { $ne: true } })
class BadNames {}

const MODELS = [Person, Acct, BadTenant, BadNames];

const names = (rows: Data[]) => rows.map((r) => r.name as string).sort();

describe('declared field names mean columns (real Parse Server on PostgreSQL)', () => {
  let bed: AgentTestBed;
  let warnings: string[];
  let master: ParseAgent;
  let acmeMaster: ParseAgent;
  let acmeUser: ParseAgent;
  let acmeService: ParseAgent;
  let session: string;
  let userId: string;

  beforeAll(async () => {
    await defineClass(PERSON, { label: { type: 'String' } });
    const alice = await createObject(PERSON, { label: 'alice' }, PUBLIC);
    const bob = await createObject(PERSON, { label: 'bob' }, PUBLIC);
    await defineClass(ACCT, {
      org_ref: { type: 'String' },
      name: { type: 'String' },
      amount: { type: 'Number' },
      soldAt: { type: 'Date' },
      owner_ref: { type: 'Pointer', targetClass: PERSON },
      archived: { type: 'Boolean' },
    });
    const rows: Array<[string, string, number, string, string, boolean]> = [
      ['a', 'acme', 3, '2025-01-10', alice, false],
      ['b', 'acme', 5, '2025-02-11', bob, false],
      ['c', 'acme', 7, '2025-02-12', alice, true],
      ['d', 'other', 11, '2025-03-13', bob, false],
    ];
    for (const [name, org, amount, day, owner, archived] of rows) {
      await createObject(
        ACCT,
        {
          name,
          org_ref: org,
          amount,
          soldAt: { __type: 'Date', iso: `${day}T12:00:00.000Z` },
          owner_ref: pointer(PERSON, owner),
          archived,
        },
        PUBLIC,
      );
    }
    await defineClass(BAD_TENANT, { title: { type: 'String' } });
    await createObject(BAD_TENANT, { title: 'x' }, PUBLIC);
    await defineClass(BAD_NAMES, { title: { type: 'String' } });
    await createObject(BAD_NAMES, { title: 'y' }, PUBLIC);
    const user = await createUser(`dn_${run}`);
    session = user.sessionToken;
    userId = user.objectId;

    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      bed = await createAgentTestBed(MODELS, { postgres: { uri: testParseConfig().databaseURI } });
      warnings = (await bed.module.get(DeclaredNamesReporter, { strict: false }).report) ?? [];
      const logged = warn.mock.calls.map((c) => String(c[0]));
      for (const line of warnings) expect(logged).toContain(line);
    } finally {
      warn.mockRestore();
    }
    master = bed.factory.create();
    acmeMaster = bed.factory.create({ tenantId: 'acme' });
    acmeUser = bed.factory.create({ sessionToken: session, tenantId: 'acme' });
    acmeService = bed.factory.create({ aclUser: userId, tenantId: 'acme' });
  }, 60_000);

  afterAll(() => bed?.close());

  const rest = (where: Data, auth: RestAuth) => findRows(ACCT, where, auth, { limit: '100' });
  const live = { archived: { $ne: true } };

  describe('a tenant scope on a property mapped to another column', () => {
    it('reads the tenant rows, as Parse REST does with the column, for every identity', async () => {
      const expected = names(await rest({ org_ref: 'acme', ...live }, { masterKey: true }));
      expect(expected).toEqual(['a', 'b']);
      const asUser = names(await rest({ org_ref: 'acme', ...live }, { sessionToken: session }));
      expect(asUser).toEqual(expected);
      for (const agent of [acmeMaster, acmeUser, acmeService]) {
        const data = ok(await agent.execute('query_class', { class_name: ACCT }));
        expect(names(data.results)).toEqual(expected);
        const count = ok(await agent.execute('count_objects', { class_name: ACCT }));
        expect(count.count).toBe(expected.length);
      }
    });

    it('scopes the analytics tools the same way', async () => {
      for (const agent of [acmeMaster, acmeUser, acmeService]) {
        const grouped = ok(
          await agent.execute('group_by', {
            class_name: ACCT,
            field: 'org_ref',
            operation: 'sum',
            value_field: 'amount',
          }),
        );
        expect(grouped.groups).toEqual([{ key: 'acme', value: 8 }]);
        const distinct = ok(await agent.execute('distinct', { class_name: ACCT, field: 'name' }));
        expect(distinct.values.sort()).toEqual(['a', 'b']);
        const summed = ok(
          await agent.execute('aggregate', {
            class_name: ACCT,
            pipeline: [{ $group: { _id: null, total: { $sum: '$amount' } } }],
          }),
        );
        expect(summed.results).toEqual([{ _id: null, total: 8 }]);
      }
    });

    it('refuses a where naming another tenant by the column', async () => {
      const res = refused(
        await acmeMaster.execute('query_class', { class_name: ACCT, where: { org_ref: 'other' } }),
      );
      expect(res.error_code).toBe('access_denied');
      expect(res.details).toMatchObject({ kind: 'tenant_scope' });
    });
  });

  describe('allowlist entries named by property or by the other spelling', () => {
    it('groups by the mapped column and by the snake_case-declared column', async () => {
      const byOrg = ok(await master.execute('group_by', { class_name: ACCT, field: 'org_ref' }));
      expect(byOrg.groups).toEqual([
        { key: 'acme', value: 2 },
        { key: 'other', value: 1 },
      ]);
      const byMonth = ok(
        await master.execute('group_by_date', {
          class_name: ACCT,
          field: 'soldAt',
          interval: 'month',
        }),
      );
      expect(byMonth.groups).toEqual([
        { key: '2025-01', value: 1 },
        { key: '2025-02', value: 1 },
        { key: '2025-03', value: 1 },
      ]);
      const owners = ok(await master.execute('group_by', { class_name: ACCT, field: 'owner_ref' }));
      expect(owners.pointer_class).toBe(PERSON);
    });

    it('returns the columns as Parse REST stores them, and get_schema names them', async () => {
      const data = ok(
        await master.execute('query_class', {
          class_name: ACCT,
          keys: ['name', 'soldAt', 'org_ref'],
          order: 'name',
        }),
      );
      const stored = await rest(live, { masterKey: true });
      const byName = new Map(stored.map((r) => [r.name, r]));
      for (const row of data.results as Data[]) {
        const truth = byName.get(row.name)!;
        expect(row.org_ref).toBe(truth.org_ref);
        expect(row.soldAt).toBe((truth.soldAt as { iso: string }).iso);
      }
      const schema = ok(await master.execute('get_schema', { class_name: ACCT }));
      const fields = JSON.stringify(schema);
      expect(fields).toContain('soldAt');
      expect(fields).not.toContain('sold_at');
      expect(fields).toContain('The organisation that owns the account');
    });

    it('refuses a property name on the wire, naming the column to use', async () => {
      const res = refused(await master.execute('group_by', { class_name: ACCT, field: 'org' }));
      expect(res.error).toContain('org_ref');
      const where = refused(
        await master.execute('query_class', { class_name: ACCT, where: { org: 'acme' } }),
      );
      expect(where.error).toContain("is the model's property name; the field is 'org_ref'");
      expect(where.details).toMatchObject({ suggested_rewrite: 'org_ref' });
    });
  });

  describe("the agent's filters option", () => {
    it('takes a property name and filters on its column', async () => {
      const agent = bed.factory.create({ filters: { [ACCT]: { org: 'other' } } });
      const data = ok(await agent.execute('query_class', { class_name: ACCT }));
      expect(names(data.results)).toEqual(
        names(await rest({ org_ref: 'other', ...live }, { masterKey: true })),
      );
      expect(names(data.results)).toEqual(['d']);
    });

    it('refuses a filter on no column of the class, naming the fields', async () => {
      const agent = bed.factory.create({ filters: { [ACCT]: { region: 'north' } } });
      const res = refused(await agent.execute('query_class', { class_name: ACCT }));
      expect(res.error_code).toBe('invalid_configuration');
      expect(res.error).toContain(`filters.${ACCT}`);
      expect(res.error).toContain("'region'");
      expect(res.error).toContain('org_ref');
    });
  });

  describe('declared names that match no column', () => {
    it('refuses every read of a class scoped on a missing tenant field, naming the real fields', async () => {
      const agent = bed.factory.create({ tenantId: 'acme' });
      for (const [tool, args] of [
        ['query_class', {}],
        ['count_objects', {}],
        ['group_by', { field: 'title' }],
        ['aggregate', { pipeline: [{ $limit: 1 }] }],
      ] as const) {
        const res = refused(await agent.execute(tool, { class_name: BAD_TENANT, ...args }));
        expect({ tool, code: res.error_code }).toEqual({ tool, code: 'invalid_configuration' });
        expect(res.error).toContain('@AgentTenantScope');
        expect(res.error).toContain("'tenant'");
        expect(res.error).toContain('title');
      }
    });

    it('refuses a canonical filter on a missing column unless the caller leaves it out', async () => {
      const res = refused(await master.execute('query_class', { class_name: BAD_NAMES }));
      expect(res.error_code).toBe('invalid_configuration');
      expect(res.error).toContain('@AgentCanonicalFilter');
      expect(res.error).toContain("'deleted'");
      expect(res.error).toContain('title');
      const without = ok(
        await master.execute('query_class', {
          class_name: BAD_NAMES,
          apply_canonical_filter: false,
        }),
      );
      expect(without.results.map((r: Data) => r.title)).toEqual(['y']);
    });

    it('refuses a read of an allowlisted name the class lacks, naming the fields it has', async () => {
      for (const args of [
        { keys: ['title', 'nickname'] },
        { where: { nickname: 'x' } },
        { order: 'nickname' },
      ]) {
        const res = refused(
          await master.execute('query_class', {
            class_name: BAD_NAMES,
            apply_canonical_filter: false,
            ...args,
          }),
        );
        expect(res.error_code).toBe('invalid_query');
        expect(res.error).toContain("'nickname'");
        expect(res.error).toContain('@AgentFields');
        expect(res.error).toContain('title');
      }
    });

    it('warns at start-up, naming the model, the names and the real fields', () => {
      const bad = warnings.filter((w) => w.includes(BAD_TENANT));
      expect(bad).toHaveLength(1);
      expect(bad[0]).toContain('Model BadTenant');
      expect(bad[0]).toContain("@AgentTenantScope 'tenant'");
      expect(bad[0]).toMatch(/Its fields: .*title/);
      const names2 = warnings.find((w) => w.includes(BAD_NAMES))!;
      expect(names2).toContain("@AgentFields 'nickname'");
      expect(names2).toContain("@AgentCanonicalFilter 'deleted'");
      // Names that resolve (a mapped property, another spelling) are no warning.
      expect(warnings.some((w) => w.includes(ACCT))).toBe(false);
    });

    it('lists them in the metadata audit, with the names read as another column', async () => {
      const report = await bed.factory.auditMetadata();
      expect(report.declared_names_without_field[BAD_TENANT]).toEqual({
        model: 'BadTenant',
        names: [{ name: 'tenant', declared_in: '@AgentTenantScope' }],
        fields: ['createdAt', 'objectId', 'title', 'updatedAt'],
      });
      expect(report.declared_names_without_field[BAD_NAMES].names).toEqual(
        expect.arrayContaining([
          { name: 'nickname', declared_in: '@AgentFields' },
          { name: 'deleted', declared_in: '@AgentCanonicalFilter' },
        ]),
      );
      expect(report.missing_tenant_fields[BAD_TENANT]).toBe('tenant');
      expect(report.unresolvable_allowlist_entries[BAD_NAMES]).toEqual(['nickname']);
      expect(report.unresolvable_allowlist_entries[ACCT]).toBeUndefined();
      expect(report.declared_names_mapped[ACCT]).toEqual({ sold_at: 'soldAt' });
    });
  });
});
