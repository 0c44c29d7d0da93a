import {
  AgentCanonicalFilter,
  AgentVisible,
  ParseClass,
  type ParseAgent,
} from 'nestjs-parse-agent';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { createObject, createUser, defineClass } from '../harness/fixtures';
import { findRows, parseRest, ParseRestError, testParseConfig } from '../harness/parse-rest';

/**
 * Small answers that were wrong, checked against a real Parse Server on PostgreSQL and compared
 * with what Parse REST answers: the canonical-filter opt-out on the helper tools, the echo of
 * group_by, export headers and counts, Parse's `$within: { $box }`, an empty pipeline and a
 * missing object.
 */
const run = Date.now().toString(36);
const SHOP = `ExShop_${run}`;
const PUBLIC = { '*': { read: true } };

@ParseClass(SHOP)
@AgentVisible()
@AgentCanonicalFilter({ archived: { $ne: true } })
class Shop {}

const geo = (latitude: number, longitude: number) => ({ __type: 'GeoPoint', latitude, longitude });
const BOX = { $within: { $box: [geo(40, -75), geo(42, -72)] } };

const SHOPS: Array<[name: string, city: string, sales: number, archived: boolean, at: number[]]> = [
  ['a', 'nyc', 10, false, [40.7, -74.0]],
  ['b', 'nyc', 30, false, [40.8, -73.9]],
  ['c', 'boston', 20, false, [42.3, -71.0]],
  ['d', 'nyc', 100, true, [40.6, -74.1]],
  ['e', 'paris', 5, false, [48.8, 2.3]],
  ['f', 'boston', 7, true, [41.5, -71.5]],
];

const master = { masterKey: true };
const names = (rows: Data[]) => rows.map((r) => r.name as string).sort();

describe('exact small answers (real Parse Server on PostgreSQL)', () => {
  let bed: AgentTestBed;
  let admin: ParseAgent;
  let user: ParseAgent;
  let service: ParseAgent;
  let session: string;

  beforeAll(async () => {
    await defineClass(SHOP, {
      name: { type: 'String' },
      city: { type: 'String' },
      sales: { type: 'Number' },
      archived: { type: 'Boolean' },
      spot: { type: 'GeoPoint' },
    });
    for (const [name, city, sales, archived, [lat, lng]] of SHOPS) {
      await createObject(SHOP, { name, city, sales, archived, spot: geo(lat, lng) }, PUBLIC);
    }
    const created = await createUser(`ex_${run}`);
    session = created.sessionToken;
    bed = await createAgentTestBed([Shop], { postgres: { uri: testParseConfig().databaseURI } });
    admin = bed.factory.create();
    user = bed.factory.create({ sessionToken: session });
    service = bed.factory.create({ aclUser: created.objectId });
  }, 60_000);

  afterAll(() => bed?.close());

  const counts = (rows: Data[]) => {
    const out: Record<string, number> = {};
    for (const r of rows) out[r.city as string] = (out[r.city as string] ?? 0) + 1;
    return out;
  };
  const asMap = (groups: Data[]) => Object.fromEntries(groups.map((g) => [g.key, g.value]));

  describe('apply_canonical_filter on group_by, group_by_date and distinct', () => {
    it('is accepted with the meaning the other read tools give it, on every identity', async () => {
      const all = await findRows(SHOP, {}, { sessionToken: session });
      const live = await findRows(SHOP, { archived: { $ne: true } }, { sessionToken: session });
      for (const agent of [admin, user, service]) {
        const kept = ok(await agent.execute('group_by', { class_name: SHOP, field: 'city' }));
        expect(asMap(kept.groups)).toEqual(counts(live));
        expect(kept).not.toHaveProperty('apply_canonical_filter');
        const opted = ok(
          await agent.execute('group_by', {
            class_name: SHOP,
            field: 'city',
            apply_canonical_filter: false,
          }),
        );
        expect(asMap(opted.groups)).toEqual(counts(all));
        expect(opted.apply_canonical_filter).toBe(false);

        const distinct = ok(
          await agent.execute('distinct', {
            class_name: SHOP,
            field: 'name',
            apply_canonical_filter: false,
          }),
        );
        expect(distinct.values.sort()).toEqual(names(all));
        expect(distinct.apply_canonical_filter).toBe(false);

        const byDate = ok(
          await agent.execute('group_by_date', {
            class_name: SHOP,
            field: 'createdAt',
            interval: 'year',
            apply_canonical_filter: false,
          }),
        );
        expect(byDate.groups.reduce((n: number, g: Data) => n + (g.value as number), 0)).toBe(
          all.length,
        );
      }
    });

    it('shows the opt-out in a dry run', async () => {
      const dry = ok(
        await admin.execute('group_by', {
          class_name: SHOP,
          field: 'city',
          apply_canonical_filter: false,
          dry_run: true,
        }),
      );
      expect(dry.parameters).toMatchObject({ apply_canonical_filter: false });
    });
  });

  describe('group_by and group_by_date echo exactly what was asked', () => {
    it.each(['avg', 'average', 'sum', 'min', 'max'])(
      'operation %s with its value_field',
      async (operation) => {
        const live = await findRows(SHOP, { archived: { $ne: true } }, master);
        const data = ok(
          await admin.execute('group_by', {
            class_name: SHOP,
            field: 'city',
            operation,
            value_field: 'sales',
          }),
        );
        expect(data.operation).toBe(operation);
        expect(data.value_field).toBe('sales');
        const nyc = live.filter((r) => r.city === 'nyc').map((r) => r.sales as number);
        const expected = {
          avg: nyc.reduce((a, b) => a + b, 0) / nyc.length,
          average: nyc.reduce((a, b) => a + b, 0) / nyc.length,
          sum: nyc.reduce((a, b) => a + b, 0),
          min: Math.min(...nyc),
          max: Math.max(...nyc),
        }[operation];
        expect(asMap(data.groups).nyc).toBeCloseTo(expected!, 9);
        const byDate = ok(
          await admin.execute('group_by_date', {
            class_name: SHOP,
            field: 'createdAt',
            interval: 'year',
            operation,
            value_field: 'sales',
          }),
        );
        expect(byDate).toMatchObject({ operation, value_field: 'sales' });
      },
    );

    it('echoes count without a value_field it was not given', async () => {
      const data = ok(await admin.execute('group_by', { class_name: SHOP, field: 'city' }));
      expect(data.operation).toBe('count');
      expect(data).not.toHaveProperty('value_field');
    });
  });

  describe('export_data', () => {
    it('writes the header line of the asked keys on an empty result, in every format', async () => {
      const empty = { where: { city: 'nowhere' }, keys: ['name', 'sales'] };
      const csv = ok(await admin.execute('export_data', { class_name: SHOP, ...empty }));
      expect(csv.row_count).toBe(0);
      expect(csv.headers).toEqual(['name', 'sales', 'objectId', 'createdAt', 'updatedAt']);
      expect(csv.output).toBe('name,sales,objectId,createdAt,updatedAt');
      const md = ok(
        await admin.execute('export_data', { class_name: SHOP, ...empty, format: 'markdown' }),
      );
      expect(md.output.split('\n')[0]).toBe('| name | sales | objectId | createdAt | updatedAt |');
      const columns = ok(
        await admin.execute('export_data', {
          class_name: SHOP,
          where: { city: 'nowhere' },
          columns: [{ name: 'Shop' }, 'sales'],
        }),
      );
      expect(columns.output).toBe('Shop,sales');
      // With rows, the same keys give the same header line.
      const full = ok(
        await admin.execute('export_data', {
          class_name: SHOP,
          where: { city: 'nyc' },
          keys: ['name', 'sales'],
        }),
      );
      expect(full.output.split('\n')[0]).toBe(csv.output);
    });

    it('says how many rows a pipeline had when it cut the export at row_cap', async () => {
      const match = { sales: { $gte: 6 } };
      const truth = await parseRest<{ count: number }>(
        'GET',
        `/classes/${SHOP}?count=1&limit=0&where=${encodeURIComponent(
          JSON.stringify({ ...match, archived: { $ne: true } }),
        )}`,
        undefined,
        master,
      );
      const data = ok(
        await admin.execute('export_data', {
          class_name: SHOP,
          pipeline: [{ $match: match }, { $project: { name: 1 } }],
          row_cap: 1,
        }),
      );
      expect(data).toMatchObject({ truncated: true, row_count: 1 });
      expect(data.available_rows).toBe(truth.count);
      expect(data.hint).toContain(`of ${truth.count}`);
    });

    it('honours apply_canonical_filter in pipeline mode', async () => {
      const all = await findRows(SHOP, {}, master);
      const data = ok(
        await admin.execute('export_data', {
          class_name: SHOP,
          pipeline: [{ $project: { name: 1 } }],
          apply_canonical_filter: false,
        }),
      );
      expect(data.row_count).toBe(all.length);
    });

    it('refuses an empty pipeline, naming its own arguments', async () => {
      const res = refused(await admin.execute('export_data', { class_name: SHOP, pipeline: [] }));
      expect(res.error_code).toBe('invalid_argument');
      expect(res.error).toContain('pipeline is empty');
      expect(res.error).toMatch(/where, keys and order/);
    });
  });

  describe("Parse's $within: { $box }", () => {
    const inBox = async () => names(await findRows(SHOP, { spot: BOX }, { sessionToken: session }));

    it('answers what Parse REST answers, on Parse REST and on the direct PostgreSQL path', async () => {
      const expected = await inBox();
      // a, b (live, inside the box); d is archived, f and c are outside, e is in Paris.
      expect(expected).toEqual(['a', 'b', 'd']);
      const live = expected.filter((n) => n !== 'd');
      for (const agent of [admin, user, service]) {
        const data = ok(
          await agent.execute('query_class', { class_name: SHOP, where: { spot: BOX } }),
        );
        expect(names(data.results)).toEqual(live);
        const count = ok(
          await agent.execute('count_objects', { class_name: SHOP, where: { spot: BOX } }),
        );
        expect(count.count).toBe(live.length);
        // Analytics run on the direct path for every identity.
        const grouped = ok(
          await agent.execute('group_by', {
            class_name: SHOP,
            field: 'city',
            where: { spot: BOX },
          }),
        );
        expect(asMap(grouped.groups)).toEqual({ nyc: live.length });
      }
    });

    it('refuses a malformed box or a box on a field that is no GeoPoint, with the form to use', async () => {
      const bad = refused(
        await admin.execute('query_class', {
          class_name: SHOP,
          where: { spot: { $within: { $box: [geo(1, 1)] } } },
        }),
      );
      expect(bad.error_code).toBe('invalid_query');
      expect(bad.error).toContain('$within takes { "$box": [southwest, northeast] }');
      const wrong = refused(
        await admin.execute('query_class', { class_name: SHOP, where: { city: BOX } }),
      );
      expect(wrong.error_code).toBe('invalid_query');
      expect(wrong.error).toContain('$within filters GeoPoint fields');
    });
  });

  describe('aggregate', () => {
    it('refuses an empty pipeline with a hint in its own arguments', async () => {
      const res = refused(await admin.execute('aggregate', { class_name: SHOP, pipeline: [] }));
      expect(res.error_code).toBe('invalid_argument');
      expect(res.error).toContain('pipeline is empty');
      expect(res.error).toContain('$match');
      expect(res.error).not.toMatch(/\b(keys|select|where)\b/);
    });

    it('still refuses a hidden or missing class first', async () => {
      const res = refused(await admin.execute('aggregate', { class_name: 'NoSuch', pipeline: [] }));
      expect(res.error_code).toBe('access_denied');
    });
  });

  describe('get_object on a missing id', () => {
    it('answers not_found where Parse REST answers 101, and a filtered-out row alike', async () => {
      let restCode: number | undefined;
      try {
        await parseRest('GET', `/classes/${SHOP}/zzzzzzzzzz`, undefined, master);
      } catch (error) {
        restCode = (error as ParseRestError).code;
      }
      expect(restCode).toBe(101);
      const missing = refused(
        await admin.execute('get_object', { class_name: SHOP, object_id: 'zzzzzzzzzz' }),
      );
      expect(missing.error_code).toBe('not_found');
      expect(missing.error).toBe(`Object not found: ${SHOP}#zzzzzzzzzz`);
      const [archived] = await findRows(SHOP, { name: 'd' }, master);
      const hidden = refused(
        await user.execute('get_object', {
          class_name: SHOP,
          object_id: archived.objectId as string,
        }),
      );
      expect(hidden.error_code).toBe('not_found');
      expect(hidden.error.replace(archived.objectId as string, 'ID')).toBe(
        missing.error.replace('zzzzzzzzzz', 'ID'),
      );
    });
  });
});
