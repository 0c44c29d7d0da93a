/**
 * Differential suite: every read tool, as four identities (a user, a user of another tenant, an
 * admin through a role, the operator with the master key), on every data path this test bed
 * configures (Parse REST alone; Parse REST with the direct PostgreSQL path, which serves analytics
 * and the aclUser/aclRole identities), over rows of adversarial values from a seeded PRNG. Each
 * value a tool returns is compared with what Parse REST returns to the same identity for the same
 * row (its session token for users, the master key for the operator), after the documented
 * projection (tool-projection.ts, docs/tools.md "How values come back"); anything else must be
 * withheld for a documented reason (ACL, tenant scope, protectedFields, a hidden class, a data
 * path that cannot serve the identity).
 *
 * The fixed seed runs in CI; DIFF_SEED and DIFF_ITERATIONS (rows) choose another or a larger run:
 *   DIFF_SEED=7 DIFF_ITERATIONS=200 npx jest test/differential --selectProjects integration
 */
import {
  AgentTenantScope,
  AgentVisible,
  ParseClass,
  type AgentOptions,
  type ParseAgent,
} from 'nestjs-parse-agent';
import type { ToolEnvelope } from 'nestjs-parse-agent';
import { BUILTIN_TOOLS } from 'nestjs-parse-agent/tools/builtin';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { findRows, testParseConfig, type RestAuth } from '../harness/parse-rest';
import { differentialNames, seedDifferential, type DifferentialSeed } from './differential-seed';
import { differentialSettings, SeededRandom } from './seeded-random';
import {
  canonical,
  cellText,
  compactColumns,
  displayRow,
  displayValue,
  keyValue,
  parseCsv,
  pipelineValue,
  type ProjectionView,
} from './tool-projection';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const run = Date.now().toString(36);
const NAMES = differentialNames(run);
const { seed, rows: ROWS } = differentialSettings();

/** The operator (master key, no tenant) reads every tenant; everyone else is bound to one. */
@ParseClass(NAMES.item)
@AgentVisible()
@AgentTenantScope('tenant', { bypass: (a) => a.usingMasterKey && !a.tenantId })
class DiffItem {}

/**
 * The class pointers point into. Every other class stays unregistered, so hidden (the default):
 * "Total$100" names a class no agent may see, which is what made such text look like a pointer.
 */
@ParseClass(NAMES.visible)
@AgentVisible()
class DiffRef {}

interface Identity {
  name: string;
  options: AgentOptions;
  /** How Parse REST is asked for the same identity's answer. */
  rest: RestAuth;
  tenant?: string;
}

interface Bed {
  name: string;
  /** The direct PostgreSQL path is configured (analytics and aclUser/aclRole are served). */
  postgres: boolean;
}

const BEDS: Bed[] = [
  { name: 'Parse REST only', postgres: false },
  { name: 'Parse REST + direct PostgreSQL', postgres: true },
];

function identities(s: DifferentialSeed, bed: Bed): Identity[] {
  const out: Identity[] = [
    {
      name: 'user (session, acme)',
      options: { sessionToken: s.alice.sessionToken, tenantId: 'acme' },
      rest: { sessionToken: s.alice.sessionToken },
      tenant: 'acme',
    },
    {
      name: 'other-tenant user (session, globex)',
      options: { sessionToken: s.bob.sessionToken, tenantId: 'globex' },
      rest: { sessionToken: s.bob.sessionToken },
      tenant: 'globex',
    },
    {
      name: 'admin via role (session, acme)',
      options: { sessionToken: s.carol.sessionToken, tenantId: 'acme' },
      rest: { sessionToken: s.carol.sessionToken },
      tenant: 'acme',
    },
    { name: 'operator (master key)', options: {}, rest: { masterKey: true } },
  ];
  if (bed.postgres) {
    out.push(
      {
        name: 'user (aclUser, acme)',
        options: { aclUser: s.alice.objectId, tenantId: 'acme' },
        rest: { sessionToken: s.alice.sessionToken },
        tenant: 'acme',
      },
      {
        name: 'other-tenant user (aclUser, globex)',
        options: { aclUser: s.bob.objectId, tenantId: 'globex' },
        rest: { sessionToken: s.bob.sessionToken },
        tenant: 'globex',
      },
      {
        // carol holds no row by her own id, so her session reads exactly what the role reads.
        name: 'admin (aclRole, acme)',
        options: { aclRole: NAMES.adminRole, tenantId: 'acme' },
        rest: { sessionToken: s.carol.sessionToken },
        tenant: 'acme',
      },
    );
  }
  return out;
}

/** Parse REST's answer for one identity: every row it may read, and those of its tenant. */
interface Oracle {
  readable: Map<string, Json>;
  visible: Map<string, Json>;
}

async function restRows(where: Json, auth: RestAuth): Promise<Json[]> {
  return findRows(NAMES.item, where, auth, { limit: '1000', order: 'seq' });
}

async function oracleFor(identity: Identity): Promise<Oracle> {
  const rows = await restRows({}, identity.rest);
  const readable = new Map(rows.map((r) => [r.objectId as string, r]));
  const visible = new Map(
    rows
      .filter((r) => !identity.tenant || r.tenant === identity.tenant)
      .map((r) => [r.objectId as string, r]),
  );
  return { readable, visible };
}

/** What differs, said briefly enough to read in a failure list. */
class Differences {
  readonly list: string[] = [];

  constructor(private readonly where: string) {}

  add(what: string, expected?: unknown, actual?: unknown): void {
    const show = (v: unknown) => {
      const text = v === undefined ? 'undefined' : JSON.stringify(v);
      return text.length > 300 ? `${text.slice(0, 300)}...` : text;
    };
    this.list.push(
      expected === undefined && actual === undefined
        ? `${this.where}: ${what}`
        : `${this.where}: ${what}\n    expected ${show(expected)}\n    actual   ${show(actual)}`,
    );
  }

  /** Two rows: every field, by name (the first few differing fields are listed). */
  row(label: string, expected: Json, actual: unknown, nullIsMissing = false): void {
    if (typeof actual !== 'object' || actual === null) {
      this.add(`${label}: not a row`, expected, actual);
      return;
    }
    const a = actual as Json;
    const keys = new Set([...Object.keys(expected), ...Object.keys(a)]);
    let reported = 0;
    for (const key of keys) {
      let e = expected[key];
      let v = a[key];
      if (nullIsMissing) {
        e = e ?? null;
        v = v ?? null;
      }
      if (canonical(e) !== canonical(v) && reported++ < 3) {
        this.add(`${label}.${key}`, e, v);
      }
    }
  }
}

function ok(envelope: ToolEnvelope, diff: Differences, what: string): Json | undefined {
  if (envelope.success) return envelope.data as Json;
  diff.add(`${what} failed: ${envelope.error_code}: ${envelope.error}`);
  return undefined;
}

/** A refusal that carries no data: what a withheld answer must look like. */
function expectRefusal(envelope: ToolEnvelope, diff: Differences, what: string, codes: string[]) {
  if (envelope.success) {
    diff.add(
      `${what} should be refused (${codes.join('/')}) but answered`,
      undefined,
      envelope.data,
    );
    return;
  }
  if (!codes.includes(String(envelope.error_code))) {
    diff.add(
      `${what} refused with ${envelope.error_code}: ${envelope.error}; expected ${codes.join('/')}`,
    );
  }
  if (JSON.stringify(envelope).includes(NAMES.hidden))
    diff.add(`${what}: refusal names the hidden class`);
}

/** Every page of a query_class call, following next_call. */
async function allPages(
  agent: ParseAgent,
  args: Json,
  diff: Differences,
): Promise<Json[] | undefined> {
  const pages: Json[] = [];
  let call: Json | undefined = args;
  while (call) {
    const data = ok(
      await agent.execute('query_class', call),
      diff,
      `query_class ${JSON.stringify(call)}`,
    );
    if (!data) return undefined;
    pages.push(data);
    call = data.next_call?.arguments;
    if (pages.length > 200) throw new Error('query_class paging does not end');
  }
  return pages;
}

/** CSV text: header line, then rows; each cell compared with the projected value's text. */
function compareCsv(
  output: string,
  expected: (objectId: string) => Json | undefined,
  diff: Differences,
  label: string,
  seen: Set<string>,
): void {
  if (!output) return;
  const [headers, ...lines] = parseCsv(output);
  const idColumn = headers.indexOf('objectId');
  if (idColumn === -1) {
    diff.add(`${label}: no objectId column`, undefined, headers);
    return;
  }
  for (const cells of lines) {
    const id = cells[idColumn];
    seen.add(id);
    const row = expected(id);
    if (!row) {
      diff.add(`${label}: row ${id} is not one this identity reads`);
      continue;
    }
    if (cells.length !== headers.length) {
      diff.add(`${label} ${id}: ${cells.length} cells for ${headers.length} headers`);
      continue;
    }
    headers.forEach((header, i) => {
      const want = cellText(row[header]);
      if (cells[i] !== want) diff.add(`${label} ${id}.${header}`, want, cells[i]);
    });
  }
}

function sameIds(
  diff: Differences,
  label: string,
  expected: Iterable<string>,
  actual: Iterable<string>,
) {
  const e = new Set(expected);
  const a = new Set(actual);
  const missing = [...e].filter((id) => !a.has(id));
  const extra = [...a].filter((id) => !e.has(id));
  if (missing.length) diff.add(`${label}: rows missing`, missing, undefined);
  if (extra.length) diff.add(`${label}: rows that should be withheld`, undefined, extra);
}

/** group/distinct answers as a map: canonical key -> value. */
function tally(pairs: Array<[unknown, number]>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [key, n] of pairs) out.set(canonical(key), (out.get(canonical(key)) ?? 0) + n);
  return out;
}

/**
 * Counts must match exactly; sums may differ by floating-point rounding, whose bound grows with
 * the magnitudes summed (`scale`: per key, n times the sum of absolute values): the database adds in its
 * own order, and with values near 1e300 the order decides which small addends survive.
 */
function compareTally(
  diff: Differences,
  label: string,
  expected: Map<string, number>,
  actual: Map<string, number>,
  scale?: Map<string, number>,
) {
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const e = expected.get(key);
    const a = actual.get(key);
    const bound = scale ? 1e-15 * (scale.get(key) ?? 0) + 1e-9 : 0;
    const close = e !== undefined && a !== undefined && Math.abs(e - a) <= bound;
    if (!close) diff.add(`${label} key ${key}`, e, a);
  }
}

const TOOLS = [
  'query_class',
  'query_class csv',
  'get_object',
  'get_objects',
  'get_sample_objects',
  'count_objects',
  'distinct',
  'group_by',
  'group_by_date',
  'aggregate',
  'export_data csv',
  'export_data csv (pipeline)',
  'schemas, plans and search',
] as const;
type ToolCase = (typeof TOOLS)[number];

/** Which case reads each built-in read tool (the read-only ones; a new one must be added here). */
const COVERAGE: Record<string, ToolCase> = {
  query_class: 'query_class',
  get_object: 'get_object',
  get_objects: 'get_objects',
  get_sample_objects: 'get_sample_objects',
  count_objects: 'count_objects',
  distinct: 'distinct',
  group_by: 'group_by',
  group_by_date: 'group_by_date',
  aggregate: 'aggregate',
  export_data: 'export_data csv',
  list_tools: 'schemas, plans and search',
  get_all_schemas: 'schemas, plans and search',
  get_schema: 'schemas, plans and search',
  explain_query: 'schemas, plans and search',
  atlas_text_search: 'schemas, plans and search',
  atlas_autocomplete: 'schemas, plans and search',
  atlas_faceted_search: 'schemas, plans and search',
  semantic_search: 'schemas, plans and search',
};

it('covers every built-in read tool', () => {
  const reads = BUILTIN_TOOLS.filter((t) => t.annotations?.readOnlyHint === true).map(
    (t) => t.name,
  );
  expect(Object.keys(COVERAGE).sort()).toEqual(reads.sort());
});

/** The analytics tools: served by the direct path, and by Parse REST only as noted. */
const ANALYTICS: ReadonlySet<ToolCase> = new Set([
  'distinct',
  'group_by',
  'group_by_date',
  'aggregate',
  'export_data csv (pipeline)',
]);

/**
 * Whether a bed serves an analytics tool to an identity. Without a direct path, only the operator's
 * distinct runs (Parse REST's /aggregate ignores ACLs, so it is master-key only, and on PostgreSQL
 * only its distinct is trustworthy); everything else is refused with what to configure
 * (docs/analytics.md).
 */
function served(bed: Bed, identity: Identity, tool: ToolCase): boolean {
  if (!ANALYTICS.has(tool) || bed.postgres) return true;
  return tool === 'distinct' && identity.rest.masterKey === true;
}

let seeded: DifferentialSeed;

beforeAll(async () => {
  seeded = await seedDifferential(run, new SeededRandom(seed), ROWS);
}, 120_000);

describe.each(BEDS)(`differential read tools (seed ${seed}, ${ROWS} rows) on $name`, (bed) => {
  let testBed: AgentTestBed;
  /** The operator's view: every row there is. */
  let all: Oracle;

  beforeAll(async () => {
    testBed = await createAgentTestBed([DiffItem, DiffRef], {
      hiddenClasses: [NAMES.hidden],
      ...(bed.postgres ? { postgres: { uri: testParseConfig().databaseURI } } : {}),
    });
    all = await oracleFor({ name: 'operator', options: {}, rest: { masterKey: true } });
  }, 60_000);
  afterAll(() => testBed?.close());

  const identityNames = ['user', 'other-tenant user', 'admin', 'operator'];
  const rowsFor = (b: Bed) => identityNames.length + (b.postgres ? 3 : 0);

  it.each(Array.from({ length: rowsFor(bed) }, (_, i) => i))(
    'identity #%s: every read tool',
    async (index) => {
      const identity = identities(seeded, bed)[index];
      const agent = testBed.factory.create(identity.options);
      const usingMaster = identity.rest.masterKey === true;
      const view: ProjectionView = {
        isDenied: (c) => testBed.metadata.isHidden(c, usingMaster),
      };
      const oracle = await oracleFor(identity);
      const report: string[] = [];
      for (const tool of TOOLS) {
        const diff = new Differences(`[${bed.name}] ${identity.name} ${tool}`);
        await checkTool(tool, { agent, identity, oracle, all, view, bed, diff });
        report.push(...diff.list);
      }
      if (report.length) {
        const shown = report.slice(0, 40).join('\n');
        throw new Error(
          `${report.length} difference(s) from Parse REST (seed ${seed}, rows ${ROWS}):\n${shown}`,
        );
      }
    },
    120_000,
  );
});

interface CheckContext {
  agent: ParseAgent;
  identity: Identity;
  oracle: Oracle;
  all: Oracle;
  view: ProjectionView;
  bed: Bed;
  diff: Differences;
}

async function checkTool(tool: ToolCase, c: CheckContext): Promise<void> {
  const { agent, diff } = c;
  if (!served(c.bed, c.identity, tool)) {
    const args = analyticsArgs(tool);
    // No path can serve the identity: a configuration refusal saying what to configure.
    expectRefusal(await agent.execute(args.name, args.args), diff, tool, ['invalid_configuration']);
    return;
  }
  switch (tool) {
    case 'query_class':
      return checkQueryClass(c);
    case 'query_class csv':
      return checkQueryCsv(c);
    case 'get_object':
      return checkGetObject(c);
    case 'get_objects':
      return checkGetObjects(c);
    case 'get_sample_objects':
      return checkSamples(c);
    case 'count_objects':
      return checkCount(c);
    case 'distinct':
      return checkDistinct(c);
    case 'group_by':
      return checkGroupBy(c);
    case 'group_by_date':
      return checkGroupByDate(c);
    case 'aggregate':
      return checkAggregate(c);
    case 'export_data csv':
      return checkExport(c, false);
    case 'export_data csv (pipeline)':
      return checkExport(c, true);
    case 'schemas, plans and search':
      return checkSchemasAndPlans(c);
  }
}

/**
 * Tools that return no stored rows: they answer (or refuse as documented), never name the hidden
 * class, and never carry a row's value.
 */
async function checkSchemasAndPlans(c: CheckContext): Promise<void> {
  const { agent, diff, bed } = c;
  const class_name = NAMES.item;
  // Stored text no schema or plan would hold by chance: with a `$`, or long.
  const values = [...c.all.visible.values()]
    .map((r) => r.label)
    .filter(
      (l): l is string =>
        typeof l === 'string' && l.length > 3 && (l.includes('$') || l.length > 40),
    );
  const quiet = (what: string, envelope: ToolEnvelope) => {
    const text = JSON.stringify(envelope);
    if (text.includes(NAMES.hidden)) diff.add(`${what} names the hidden class`);
    const leaked = values.find((v) => text.includes(JSON.stringify(v).slice(1, -1)));
    if (leaked !== undefined) diff.add(`${what} carries a row value`, undefined, leaked);
  };
  for (const [tool, args] of [
    ['list_tools', {}],
    ['get_all_schemas', {}],
    ['get_schema', { class_name }],
  ] as const) {
    const envelope = await agent.execute(tool, args);
    ok(envelope, diff, tool);
    quiet(tool, envelope);
  }
  const explain = await agent.execute('explain_query', { class_name, where: { seq: { $gt: 1 } } });
  if (bed.postgres) ok(explain, diff, 'explain_query');
  else expectRefusal(explain, diff, 'explain_query', ['invalid_configuration']);
  quiet('explain_query', explain);
  // No Atlas here: full-text search is refused on every path of this bed, with what to configure.
  for (const [tool, args] of [
    ['atlas_text_search', { class_name, query: 'Total', fields: ['label'] }],
    ['atlas_autocomplete', { class_name, query: 'To', field: 'label' }],
    ['atlas_faceted_search', { class_name, query: 'Total', fields: ['label'], facets: ['tenant'] }],
  ] as const) {
    expectRefusal(await agent.execute(tool, args), diff, tool, ['invalid_configuration']);
  }
  // This bed's class is not @AgentSearchable: semantic_search refuses it (or is not offered when
  // no class is searchable), without a row's value; its own oracle suite is test/retrieval.
  const search = await agent.execute('semantic_search', { class_name, query: 'Total' });
  expectRefusal(search, diff, 'semantic_search', ['invalid_argument', 'unknown_tool']);
  quiet('semantic_search', search);
}

function analyticsArgs(tool: ToolCase): { name: string; args: Json } {
  const class_name = NAMES.item;
  switch (tool) {
    case 'distinct':
      return { name: 'distinct', args: { class_name, field: 'label' } };
    case 'group_by':
      return { name: 'group_by', args: { class_name, field: 'label' } };
    case 'group_by_date':
      return { name: 'group_by_date', args: { class_name, field: 'when', interval: 'day' } };
    case 'aggregate':
      return { name: 'aggregate', args: { class_name, pipeline: [{ $sort: { seq: 1 } }] } };
    default:
      return { name: 'export_data', args: { class_name, pipeline: [{ $sort: { seq: 1 } }] } };
  }
}

/** A few labels the rows hold, `$`-strings first: where clauses compare them exactly. */
function someLabels(all: Oracle): string[] {
  const labels = [...new Set([...all.visible.values()].map((r) => r.label))].filter(
    (l): l is string => typeof l === 'string',
  );
  return [...labels.filter((l) => l.includes('$')).slice(0, 3), ...labels.slice(0, 1)];
}

async function checkQueryClass(c: CheckContext): Promise<void> {
  const { agent, oracle, view, diff, identity } = c;
  const pages = await allPages(agent, { class_name: NAMES.item, order: 'seq', limit: 7 }, diff);
  if (!pages) return;
  const rows = pages.flatMap((p) => p.results as Json[]);
  sameIds(
    diff,
    'all rows',
    oracle.visible.keys(),
    rows.map((r) => r.objectId),
  );
  for (const row of rows) {
    const rest = oracle.visible.get(row.objectId);
    if (rest) diff.row(row.objectId, displayRow(rest, view), row);
  }
  for (const label of someLabels(c.all)) {
    const where = { label };
    const expected = await restRows(
      identity.tenant ? { ...where, tenant: identity.tenant } : where,
      identity.rest,
    );
    const data = ok(
      await agent.execute('query_class', {
        class_name: NAMES.item,
        where,
        order: 'seq',
        limit: 1000,
      }),
      diff,
      `where ${JSON.stringify(where)}`,
    );
    if (!data) continue;
    sameIds(
      diff,
      `where label=${JSON.stringify(label)}`,
      expected.map((r) => r.objectId),
      (data.results as Json[]).map((r) => r.objectId),
    );
  }
}

async function checkQueryCsv(c: CheckContext): Promise<void> {
  const { agent, oracle, view, diff } = c;
  const pages = await allPages(
    agent,
    { class_name: NAMES.item, order: 'seq', limit: 9, format: 'csv' },
    diff,
  );
  if (!pages) return;
  const seen = new Set<string>();
  for (const page of pages) {
    compareCsv(
      page.output as string,
      (id) => {
        const rest = oracle.visible.get(id);
        return rest && displayRow(rest, view);
      },
      diff,
      'csv',
      seen,
    );
  }
  sameIds(diff, 'csv rows', oracle.visible.keys(), seen);
}

/** Rows this identity's ACL lets it read but its tenant scope does not: refused, never shown. */
function otherTenantIds(c: CheckContext): string[] {
  return [...c.oracle.readable.keys()].filter((id) => !c.oracle.visible.has(id));
}

async function checkGetObject(c: CheckContext): Promise<void> {
  const { agent, oracle, all, view, diff } = c;
  const foreign = new Set(otherTenantIds(c));
  for (const id of all.visible.keys()) {
    const envelope = await agent.execute('get_object', { class_name: NAMES.item, object_id: id });
    const rest = oracle.visible.get(id);
    if (rest) {
      const data = ok(envelope, diff, `get_object ${id}`);
      if (data) diff.row(id, displayRow(rest, view), data.object);
    } else {
      // Not readable: not found. Readable but another tenant's: refused by the tenant scope.
      expectRefusal(
        envelope,
        diff,
        `get_object ${id}`,
        foreign.has(id) ? ['access_denied'] : ['parse_error', 'not_found'],
      );
    }
  }
}

async function checkGetObjects(c: CheckContext): Promise<void> {
  const { agent, oracle, all, view, diff } = c;
  const foreign = new Set(otherTenantIds(c));
  const ids = [...all.visible.keys()].filter((id) => !foreign.has(id));
  for (let i = 0; i < ids.length; i += 50) {
    const chunk = ids.slice(i, i + 50);
    const data = ok(
      await agent.execute('get_objects', { class_name: NAMES.item, ids: chunk }),
      diff,
      'get_objects',
    );
    if (!data) continue;
    const expected = chunk.filter((id) => oracle.visible.has(id));
    sameIds(diff, 'get_objects', expected, Object.keys(data.objects as Json));
    sameIds(
      diff,
      'get_objects missing',
      chunk.filter((id) => !oracle.visible.has(id)),
      data.missing as string[],
    );
    for (const [id, object] of Object.entries(data.objects as Json)) {
      const rest = oracle.visible.get(id);
      if (rest) diff.row(id, displayRow(rest, view), object);
    }
  }
  if (foreign.size) {
    const envelope = await agent.execute('get_objects', {
      class_name: NAMES.item,
      ids: [...foreign].slice(0, 3),
    });
    expectRefusal(envelope, diff, 'get_objects of another tenant', ['access_denied']);
  }
}

async function checkSamples(c: CheckContext): Promise<void> {
  const { agent, oracle, view, diff } = c;
  const data = ok(
    await agent.execute('get_sample_objects', { class_name: NAMES.item, limit: 20 }),
    diff,
    'get_sample_objects',
  );
  if (!data) return;
  const samples = data.samples as Json[];
  if (samples.length !== Math.min(20, oracle.visible.size)) {
    diff.add('sample count', Math.min(20, oracle.visible.size), samples.length);
  }
  for (const row of samples) {
    const rest = oracle.visible.get(row.objectId);
    if (!rest) diff.add(`sample ${row.objectId} is not one this identity reads`);
    else diff.row(row.objectId, displayRow(rest, view), row);
  }
}

async function checkCount(c: CheckContext): Promise<void> {
  const { agent, oracle, diff, identity } = c;
  const total = ok(await agent.execute('count_objects', { class_name: NAMES.item }), diff, 'count');
  if (total && total.count !== oracle.visible.size)
    diff.add('count', oracle.visible.size, total.count);
  for (const label of someLabels(c.all)) {
    const where = { label };
    const expected = await restRows(
      identity.tenant ? { ...where, tenant: identity.tenant } : where,
      identity.rest,
    );
    const data = ok(
      await agent.execute('count_objects', { class_name: NAMES.item, where }),
      diff,
      `count ${label}`,
    );
    if (data && data.count !== expected.length)
      diff.add(`count label=${JSON.stringify(label)}`, expected.length, data.count);
  }
}

/** The values of a field over the identity's rows, as group keys and distinct values show them. */
function valuesOf(
  rows: Iterable<Json>,
  field: string,
  view: ProjectionView,
  flatten = false,
): unknown[] {
  const out: unknown[] = [];
  const pointer = POINTER_COLUMNS.has(field);
  for (const row of rows) {
    const value = row[field];
    if (flatten && Array.isArray(value)) for (const v of value) out.push(keyValue(v, view));
    else out.push(value === undefined ? null : keyValue(value, view, pointer));
  }
  return out;
}

/** The item class's Pointer columns. */
const POINTER_COLUMNS = new Set(['ref', 'secret']);

async function checkDistinct(c: CheckContext): Promise<void> {
  const { agent, oracle, view, diff } = c;
  const cases: Array<[string, boolean]> = [
    ['label', false],
    ['amount', false],
    ['flag', false],
    ['tenant', false],
    ['ref', false],
    ['when', false],
  ];
  if (c.bed.postgres) cases.push(['tags', true], ['tags', false]);
  else {
    // Whole arrays need a pipeline, which Parse REST on PostgreSQL cannot run; elements that are
    // plain objects are altered by Parse REST's /aggregate (documented refusals).
    expectRefusal(
      await agent.execute('distinct', { class_name: NAMES.item, field: 'tags' }),
      diff,
      'distinct tags (whole arrays)',
      ['invalid_argument'],
    );
    const typed = ['Pointer', 'Date', 'File', 'GeoPoint', 'Polygon', 'Bytes', 'Relation'];
    const objects = [...oracle.visible.values()].some(
      (r) =>
        Array.isArray(r.tags) &&
        r.tags.some(
          (t: Json) =>
            typeof t === 'object' && t !== null && !Array.isArray(t) && !typed.includes(t.__type),
        ),
    );
    if (!objects) cases.push(['tags', true]);
    else {
      expectRefusal(
        await agent.execute('distinct', {
          class_name: NAMES.item,
          field: 'tags',
          flatten_arrays: true,
        }),
        diff,
        'distinct tags (elements, some objects)',
        // Parse Server itself fails on some such values (an object with a createdAt string).
        ['invalid_argument', 'parse_error'],
      );
    }
  }
  for (const [field, flatten] of cases) {
    const args = {
      class_name: NAMES.item,
      field,
      limit: 5000,
      sort: 'asc',
      flatten_arrays: flatten,
    };
    const data = ok(await agent.execute('distinct', args), diff, `distinct ${field}`);
    if (!data) continue;
    // Missing and null are one "no value" and are not listed.
    const expected = new Set(
      valuesOf(oracle.visible.values(), field, view, flatten)
        .filter((v) => v !== null)
        .map(canonical),
    );
    const actual = new Set((data.values as unknown[]).map(canonical));
    for (const v of expected)
      if (!actual.has(v)) diff.add(`distinct ${field}: value missing`, v, undefined);
    for (const v of actual)
      if (!expected.has(v)) diff.add(`distinct ${field}: value not in any row`, undefined, v);
    if (field === 'ref' && oracle.visible.size && data.pointer_class !== NAMES.visible) {
      diff.add('distinct ref pointer_class', NAMES.visible, data.pointer_class);
    }
  }
  // Object values are not listed: the direct PostgreSQL path has no distinct for them, and
  // Parse REST's /aggregate drops their non-identifier keys (documented refusal on both).
  expectRefusal(
    await agent.execute('distinct', { class_name: NAMES.item, field: 'data' }),
    diff,
    'distinct data',
    ['invalid_argument'],
  );
  // A pointer into the hidden class: refused without naming it.
  expectRefusal(
    await agent.execute('distinct', { class_name: NAMES.item, field: 'secret' }),
    diff,
    'distinct secret',
    ['access_denied'],
  );
}

async function checkGroupBy(c: CheckContext): Promise<void> {
  const { agent, oracle, view, diff } = c;
  for (const field of ['label', 'flag', 'tenant', 'ref', 'amount']) {
    const data = ok(
      await agent.execute('group_by', { class_name: NAMES.item, field, limit: 1000 }),
      diff,
      `group_by ${field}`,
    );
    if (!data) continue;
    const expected = tally(valuesOf(oracle.visible.values(), field, view).map((k) => [k, 1]));
    const actual = tally((data.groups as Json[]).map((g) => [g.key, g.value as number]));
    compareTally(diff, `group_by ${field}`, expected, actual);
  }
  const sums = ok(
    await agent.execute('group_by', {
      class_name: NAMES.item,
      field: 'flag',
      operation: 'sum',
      value_field: 'amount',
    }),
    diff,
    'group_by flag sum amount',
  );
  if (sums) {
    const amounts = [...oracle.visible.values()].map((r): [unknown, number] => [
      r.flag ?? null,
      typeof r.amount === 'number' ? r.amount : 0,
    ]);
    const expected = tally(amounts);
    const scale = tally(amounts.map(([k, v]) => [k, Math.abs(v) * amounts.length]));
    compareTally(
      diff,
      'group_by flag sum(amount)',
      expected,
      tally((sums.groups as Json[]).map((g) => [g.key, g.value])),
      scale,
    );
  }
  expectRefusal(
    await agent.execute('group_by', { class_name: NAMES.item, field: 'secret' }),
    diff,
    'group_by secret',
    ['access_denied'],
  );
}

async function checkGroupByDate(c: CheckContext): Promise<void> {
  const { agent, oracle, diff } = c;
  const data = ok(
    await agent.execute('group_by_date', {
      class_name: NAMES.item,
      field: 'when',
      interval: 'day',
      limit: 1000,
    }),
    diff,
    'group_by_date',
  );
  if (!data) return;
  const expected = tally(
    [...oracle.visible.values()]
      .filter((r) => r.when?.iso)
      // Day buckets in UTC, keyed "YYYY-MM-DD" (docs/analytics.md).
      .map((r) => [(r.when.iso as string).slice(0, 10), 1]),
  );
  const actual = tally((data.groups as Json[]).map((g) => [g.key, g.value as number]));
  compareTally(diff, 'group_by_date when/day', expected, actual);
}

/** A REST row as a pipeline shows it: pointer columns into hidden classes are not readable there. */
function pipelineRow(rest: Json, view: ProjectionView): Json {
  const { secret: _unreadable, ...rest2 } = pipelineValue(rest, view) as Json;
  return rest2;
}

async function checkAggregate(c: CheckContext): Promise<void> {
  const { agent, oracle, view, diff } = c;
  const class_name = NAMES.item;

  const whole = ok(
    await agent.execute('aggregate', {
      class_name,
      pipeline: [{ $sort: { seq: 1 } }, { $limit: 1000 }],
    }),
    diff,
    'aggregate rows',
  );
  if (whole) {
    const expected = compactColumns([...oracle.visible.values()].map((r) => pipelineRow(r, view)));
    const byId = new Map(expected.rows.map((r) => [r.objectId as string, r]));
    const results = whole.results as Json[];
    sameIds(
      diff,
      'aggregate rows',
      byId.keys(),
      results.map((r) => r.objectId),
    );
    for (const row of results) {
      const want = byId.get(row.objectId);
      if (want) diff.row(`aggregate ${row.objectId}`, want, row, true);
    }
    if (canonical(whole.pointer_classes ?? {}) !== canonical(expected.pointerClasses)) {
      diff.add('aggregate pointer_classes', expected.pointerClasses, whole.pointer_classes);
    }
  }

  for (const field of ['label', 'ref', 'flag']) {
    const data = ok(
      await agent.execute('aggregate', {
        class_name,
        pipeline: [{ $group: { _id: `$${field}`, n: { $sum: 1 } } }, { $limit: 1000 }],
      }),
      diff,
      `aggregate $group ${field}`,
    );
    if (!data) continue;
    const expected = tally(valuesOf(oracle.visible.values(), field, view).map((k) => [k, 1]));
    const actual = tally((data.results as Json[]).map((g) => [g._id, g.n as number]));
    compareTally(diff, `aggregate $group ${field}`, expected, actual);
    if (field === 'ref' && data.pointer_classes?._id !== NAMES.visible) {
      diff.add('aggregate $group ref pointer_classes._id', NAMES.visible, data.pointer_classes);
    }
  }

  const renamed = ok(
    await agent.execute('aggregate', {
      class_name,
      pipeline: [
        { $sort: { seq: 1 } },
        { $project: { objectId: 1, seq: 1, copy: '$label', link: '$ref' } },
        { $limit: 1000 },
      ],
    }),
    diff,
    'aggregate $project',
  );
  if (renamed) {
    for (const row of renamed.results as Json[]) {
      const rest = oracle.visible.get(row.objectId);
      if (!rest) {
        diff.add(`aggregate $project ${row.objectId} is not one this identity reads`);
        continue;
      }
      const want = {
        objectId: rest.objectId,
        seq: rest.seq,
        copy: rest.label ?? null,
        link: rest.ref?.objectId ?? null,
      };
      diff.row(`aggregate $project ${row.objectId}`, want, row, true);
    }
    const links = [...oracle.visible.values()].some((r) => r.ref);
    if (links && renamed.pointer_classes?.link !== NAMES.visible) {
      diff.add('aggregate $project pointer_classes.link', NAMES.visible, renamed.pointer_classes);
    }
  }
}

async function checkExport(c: CheckContext, pipeline: boolean): Promise<void> {
  const { agent, oracle, view, diff } = c;
  const args: Json = pipeline
    ? { class_name: NAMES.item, pipeline: [{ $sort: { seq: 1 } }], row_cap: 1000 }
    : { class_name: NAMES.item, order: 'seq', row_cap: 1000 };
  const data = ok(await agent.execute('export_data', args), diff, 'export_data');
  if (!data) return;
  const seen = new Set<string>();
  compareCsv(
    data.output as string,
    (id) => {
      const rest = oracle.visible.get(id);
      if (!rest) return undefined;
      return pipeline
        ? (displayValue(pipelineRow(rest, view), view) as Json)
        : displayRow(rest, view);
    },
    diff,
    pipeline ? 'export (pipeline)' : 'export',
    seen,
  );
  sameIds(diff, 'export rows', oracle.visible.keys(), seen);
}
