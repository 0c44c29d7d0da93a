import 'reflect-metadata';
import type { AgentIdentity } from '../../core/agent-identity';
import { AccessDeniedError } from '../../core/errors';
import type { ParseSchema, SchemaSource } from '../../core/parse-schema';
import { DataPathUnavailableError } from '../../data/data-router';
import { handOverRows } from '../../data/handed-over-rows';
import { AgentFields } from '../../metadata/decorators/agent-fields.decorators';
import { AgentHidden } from '../../metadata/decorators/agent-hidden.decorator';
import { AgentTenantScope } from '../../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../../metadata/decorators/parse-class.decorator';
import { MetadataRegistry } from '../../metadata/metadata-registry';
import type { DataOperation, DataPath } from '../../ports/data-path';
import { ReadPolicy } from '../../security/read-policy';
import { DEFAULT_ANALYTICS_SETTINGS, type AnalyticsSettings } from '../tool-context';
import { CollscanRefusedError } from './analytics-policy';
import { PolicedReader } from './policed-reader';

@ParseClass('Team')
@AgentFields('name', 'tenantId', 'size')
@AgentTenantScope('tenantId', { from: (a) => a.tenantId })
class Team {}

@ParseClass('Vault')
@AgentHidden()
class Vault {}

const fields = { name: { type: 'String' }, tenantId: { type: 'String' }, size: { type: 'Number' } };
const table = new Map<string, ParseSchema>([
  ['Team', { className: 'Team', fields }],
  ['Vault', { className: 'Vault', fields: {} }],
]);
const schemas: SchemaSource = {
  get: async (name) => table.get(name),
  all: async () => table,
  invalidate: () => undefined,
};

const alice: AgentIdentity = {
  agentId: 'a',
  permissions: 'readonly',
  authType: 'master_key',
  usingMasterKey: true,
  tenantId: 'acme',
};

interface Call {
  method: string;
  args: unknown[];
}

/** A path with only the row methods; a test adds what it needs. */
function rowPath(calls: Call[], rows: Record<string, unknown>[] = []): DataPath {
  const log =
    (method: string, answer: unknown) =>
    async (...args: unknown[]) => {
      calls.push({ method, args });
      return answer;
    };
  return {
    kind: 'rows-only',
    find: log('find', rows) as DataPath['find'],
    get: log('get', rows[0]) as DataPath['get'],
    count: log('count', rows.length) as DataPath['count'],
  };
}

function reader(path: DataPath, analytics: Partial<AnalyticsSettings> = {}) {
  const routed: DataOperation[] = [];
  const access = new ReadPolicy(
    alice,
    new MetadataRegistry().register(Team, Vault),
    schemas,
    undefined,
    {},
  );
  const read = new PolicedReader({
    access,
    pathFor: (operation) => {
      routed.push(operation);
      return path;
    },
    signal: new AbortController().signal,
    timeoutMs: 30_000,
    analytics: { ...DEFAULT_ANALYTICS_SETTINGS, ...analytics },
  });
  return { read, routed };
}

const TENANT = { tenantId: 'acme' };
const leaky = {
  objectId: 't1',
  name: 'Core',
  tenantId: 'acme',
  _rperm: ['x'],
  ACL: {},
  vault: 'Vault$v1',
};

describe('PolicedReader', () => {
  it('gates before it asks for any path: a hidden class is refused with no I/O', async () => {
    const calls: Call[] = [];
    const { read, routed } = reader(rowPath(calls));
    await expect(read.find('Vault', { limit: 5 })).rejects.toThrow(AccessDeniedError);
    await expect(read.count('Vault', {})).rejects.toThrow(AccessDeniedError);
    await expect(read.prepare('aggregate', 'Vault', [])).rejects.toThrow(AccessDeniedError);
    expect(routed).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('find reads with the planned where, checked order and projection, and returns redacted rows', async () => {
    const calls: Call[] = [];
    const { read } = reader(rowPath(calls, [leaky]));
    const page = await read.find('Team', { where: { size: 3 }, order: '-size', limit: 5 });
    const [query] = calls[0].args.slice(1) as [Record<string, unknown>];
    expect(query).toMatchObject({ order: '-size', limit: 5 });
    expect(query.where).toEqual({ $and: [{ size: 3 }, TENANT] });
    // Internal fields, the ACL and the field outside Team's allowlist are gone.
    expect(page.rows).toEqual([{ objectId: 't1', name: 'Core', tenantId: 'acme' }]);
    // count() counts under the same plan, not the caller's where.
    await page.count();
    expect(calls[1]).toEqual({ method: 'count', args: ['Team', query.where, expect.anything()] });
  });

  it('empties the raw rows a built-in path handed over once they are redacted, never a path-owned array', async () => {
    const handed = handOverRows([{ ...leaky }, { ...leaky, objectId: 't2' }]);
    const page = await reader(rowPath([], handed)).read.find('Team', { limit: 5 });
    expect(page.rows.map((r) => r.objectId)).toEqual(['t1', 't2']);
    expect(handed).toHaveLength(0);
    const viaGetMany = handOverRows([{ ...leaky }]);
    const many = await reader(rowPath([], viaGetMany)).read.getMany('Team', ['t1']);
    expect(many.rows).toEqual([{ objectId: 't1', name: 'Core', tenantId: 'acme' }]);
    expect(viaGetMany).toHaveLength(0);
    // A custom path that keeps its arrays (a cache) gets them back as they were.
    const cached = [{ ...leaky }];
    const { read } = reader(rowPath([], cached));
    await read.find('Team', { limit: 5 });
    await read.find('Team', { limit: 5 });
    expect(cached).toEqual([leaky]);
  });

  it('refuses an order on a field outside the allowlist before reading', async () => {
    const calls: Call[] = [];
    const { read } = reader(rowPath(calls));
    await expect(read.find('Team', { order: 'secret', limit: 1 })).rejects.toThrow(
      AccessDeniedError,
    );
    expect(calls).toEqual([]);
  });

  it('get refuses a row of another tenant, and answers undefined for a missing one', async () => {
    const calls: Call[] = [];
    const foreign = { objectId: 't9', name: 'Other', tenantId: 'globex' };
    await expect(reader(rowPath(calls, [foreign])).read.get('Team', 't9')).rejects.toMatchObject({
      errorCode: 'access_denied',
      details: { kind: 'tenant_scope' },
    });
    const missing = await reader(rowPath([], [])).read.get('Team', 't0');
    expect(missing.row).toBeUndefined();
  });

  it('explain on a path that cannot explain says what to configure', async () => {
    const { read } = reader(rowPath([]));
    const refused = read.explain('Team', { where: { size: 1 } });
    await expect(refused).rejects.toThrow(DataPathUnavailableError);
    await expect(refused).rejects.toThrow(
      "The 'rows-only' data path cannot explain queries. Configure a direct database path",
    );
  });

  it('a pipeline on a path that cannot run one says what to configure', async () => {
    const { read } = reader(rowPath([]));
    const prepared = await read.prepare('group_by', 'Team', [{ $group: { _id: '$name' } }]);
    await expect(prepared.run()).rejects.toThrow(
      "The 'rows-only' data path chosen for 'group_by' cannot run aggregation pipelines for this agent.",
    );
  });

  it('a dry run stops after prepare: the scoped pipeline is shown and nothing is read', async () => {
    const calls: Call[] = [];
    const { read } = reader(rowPath(calls));
    const prepared = await read.prepare('aggregate', 'Team', [{ $match: { size: 2 } }]);
    expect(JSON.stringify(prepared.pipeline)).toContain('"tenantId":"acme"');
    expect(prepared).toMatchObject({ autoLimited: true, autoLimit: 200 });
    expect(calls).toEqual([]);
  });

  it("uses a path's own group-by with the planned where, and the pipeline when the path has none", async () => {
    const calls: Call[] = [];
    const path = rowPath(calls);
    path.aggregate = async (...args) => {
      calls.push({ method: 'aggregate', args });
      return [{ _id: 'Core', value: 1, _rperm: ['x'] }];
    };
    const native = { groupBy: { field: 'name', operation: 'count' as const, limit: 5 } };
    const { read } = reader(path);
    const prepared = await read.prepare('group_by', 'Team', [{ $group: { _id: '$name' } }]);
    expect(await prepared.run({ where: { size: 1 }, native })).toEqual([{ _id: 'Core', value: 1 }]);
    expect(calls.map((c) => c.method)).toEqual(['aggregate']);

    path.groupBy = async (...args) => {
      calls.push({ method: 'groupBy', args });
      return [
        { key: 'Vault$v1', value: 2 },
        { key: { __type: 'Pointer', className: 'Vault', objectId: 'v1' }, value: 1 },
      ];
    };
    const again = await reader(path).read.prepare('group_by', 'Team', []);
    // A string key is data, whatever it looks like; a Pointer into a hidden class is redacted.
    expect(await again.run({ where: { size: 1 }, native })).toEqual([
      { _id: 'Vault$v1', value: 2 },
      { _id: { className: 'Vault', __redacted: true }, value: 1 },
    ]);
    const spec = calls[1].args[1] as { where: unknown };
    expect(spec.where).toEqual({ $and: [{ size: 1 }, TENANT] });
  });

  it('sorts native distinct values, and leaves flattening to a path that runs pipelines', async () => {
    const calls: Call[] = [];
    const path = rowPath(calls);
    path.distinct = async (...args) => {
      calls.push({ method: 'distinct', args });
      return ['b', 2, 'a', 1];
    };
    const { read } = reader(path);
    const prepared = await read.prepare('distinct', 'Team', []);
    const distinct = { field: 'name', limit: 10 };
    const asc = await prepared.run({ native: { distinct, sort: 'asc' } });
    expect(asc.map((r) => r._id)).toEqual([1, 2, 'a', 'b']);
    const desc = await prepared.run({ native: { distinct, sort: 'desc' } });
    expect(desc.map((r) => r._id)).toEqual(['b', 'a', 2, 1]);

    path.aggregate = async (...args) => {
      calls.push({ method: 'aggregate', args });
      return [{ _id: 'x' }];
    };
    const flat = await reader(path).read.prepare('distinct', 'Team', []);
    await flat.run({ native: { distinct, pipelineWhenPossible: true } });
    expect(calls.at(-1)?.method).toBe('aggregate');
  });

  it('with refuseCollscan, explains the caller filter first and refuses a full scan before it runs', async () => {
    const calls: Call[] = [];
    const path = rowPath(calls);
    path.explain = async (...args) => {
      calls.push({ method: 'explain', args });
      return { winningPlan: 'COLLSCAN', collectionScan: true, indexesUsed: [] };
    };
    path.aggregate = async (...args) => {
      calls.push({ method: 'aggregate', args });
      return [];
    };
    const { read } = reader(path, { refuseCollscan: true });
    const prepared = await read.prepare('aggregate', 'Team', [{ $match: { size: 1 } }]);
    await expect(prepared.run({ where: { size: 1 } })).rejects.toThrow(CollscanRefusedError);
    expect(calls.map((c) => c.method)).toEqual(['explain']);
    // Without a filter there is nothing to explain: it runs.
    await prepared.run({});
    expect(calls.map((c) => c.method)).toEqual(['explain', 'aggregate']);
  });

  it('with refuseCollscan, pre-flights find and count with the planned where, before they read', async () => {
    const calls: Call[] = [];
    const path = rowPath(calls);
    let scan = true;
    path.explain = async (...args) => {
      calls.push({ method: 'explain', args });
      return {
        winningPlan: scan ? 'Seq Scan' : 'Index Scan',
        collectionScan: scan,
        indexesUsed: [],
      };
    };
    const { read } = reader(path, { refuseCollscan: true });
    await expect(read.find('Team', { where: { size: 1 }, limit: 5 })).rejects.toThrow(
      CollscanRefusedError,
    );
    await expect(read.count('Team', { where: { size: 1 } })).rejects.toThrow(/add an index/);
    expect(calls.map((c) => c.method)).toEqual(['explain', 'explain']);
    // What is explained is what would run: the caller's filter with the tenant scope.
    expect((calls[0].args[1] as { where: unknown }).where).toEqual({
      $and: [{ size: 1 }, TENANT],
    });
    scan = false;
    await read.find('Team', { where: { size: 1 }, limit: 5 });
    expect(calls.map((c) => c.method)).toEqual(['explain', 'explain', 'explain', 'find']);
  });

  it('with refuseCollscan, runs reads unchecked where no path can explain for the agent', async () => {
    const calls: Call[] = [];
    const path = rowPath(calls);
    const access = new ReadPolicy(
      alice,
      new MetadataRegistry().register(Team, Vault),
      schemas,
      undefined,
      {},
    );
    const read = new PolicedReader({
      access,
      pathFor: (operation) => {
        if (operation === 'explain') throw new DataPathUnavailableError('no explain here');
        return path;
      },
      signal: new AbortController().signal,
      timeoutMs: 30_000,
      analytics: { ...DEFAULT_ANALYTICS_SETTINGS, refuseCollscan: true },
    });
    await read.find('Team', { where: { size: 1 }, limit: 5 });
    expect(calls.map((c) => c.method)).toEqual(['find']);
  });

  it('binds each operation once per call', async () => {
    const { read, routed } = reader(rowPath([]));
    await read.find('Team', { limit: 1 });
    await read.find('Team', { limit: 1 });
    await read.count('Team', {});
    expect(routed).toEqual(['find', 'count']);
  });
});
