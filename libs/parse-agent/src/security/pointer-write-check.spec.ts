import 'reflect-metadata';
import { Query } from 'mingo';
import type { AgentIdentity } from '../core/agent-identity';
import { AccessDeniedError, AgentValidationError, ParseRequestError } from '../core/errors';
import type { ParseSchema, SchemaSource } from '../core/parse-schema';
import { AgentCanonicalFilter } from '../metadata/decorators/agent-canonical-filter.decorator';
import { AgentHidden } from '../metadata/decorators/agent-hidden.decorator';
import { AgentTenantScope } from '../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../metadata/decorators/parse-class.decorator';
import { MetadataRegistry } from '../metadata/metadata-registry';
import type { DataFindQuery, DataPath, DataRow } from '../ports/data-path';
import {
  assertPointersReadable,
  isPointerRefusal,
  pointerCheckedWrites,
  pointersWritten,
} from './pointer-write-check';
import { ReadPolicy } from './read-policy';

@ParseClass('Customer')
@AgentCanonicalFilter({ isDeleted: { $ne: true } })
@AgentTenantScope('tenantId')
class Customer {}

@ParseClass('Vault')
@AgentHidden()
class Vault {}

const fields = { tenantId: { type: 'String' }, isDeleted: { type: 'Boolean' } };
const table = new Map<string, ParseSchema>([
  ['Customer', { className: 'Customer', fields }],
  ['Order', { className: 'Order', fields: {} }],
  ['Vault', { className: 'Vault', fields: {} }],
]);
const schemas: SchemaSource = {
  get: async (name) => table.get(name),
  all: async () => table,
  invalidate: () => undefined,
};

const identity: AgentIdentity = {
  agentId: 'a',
  permissions: 'write',
  authType: 'master_key',
  usingMasterKey: true,
  tenantId: 'acme',
};

const CUSTOMERS: DataRow[] = [
  { objectId: 'mine', tenantId: 'acme' },
  { objectId: 'mine2', tenantId: 'acme' },
  { objectId: 'theirs', tenantId: 'globex' },
  { objectId: 'gone', tenantId: 'acme', isDeleted: true },
];

const policy = () =>
  new ReadPolicy(identity, new MetadataRegistry().register(Customer, Vault), schemas, undefined, {
    Customer: { objectId: { $ne: 'filtered' } },
  });

/** A read path over CUSTOMERS that applies the where it is given (as every path does). */
function readPath(finds: DataFindQuery[] = [], fail?: Error): DataPath {
  return {
    kind: 'rows',
    async find(_className, query) {
      finds.push(query);
      if (fail) throw fail;
      return new Query(query.where ?? {}).find(CUSTOMERS).all() as DataRow[];
    },
    get: async () => undefined,
    count: async () => 0,
  };
}

const ptr = (objectId: string, className = 'Customer') => ({
  __type: 'Pointer',
  className,
  objectId,
});

describe('pointersWritten', () => {
  it('finds pointers set directly, in arrays, in Add/AddUnique/AddRelation/Batch and inside objects', () => {
    const found = pointersWritten({
      a: ptr('1'),
      b: [ptr('2'), 'x', 3],
      c: { __op: 'AddUnique', objects: [ptr('3')] },
      d: { __op: 'AddRelation', objects: [ptr('4')] },
      e: { nested: { deeper: ptr('5') } },
      f: { __op: 'Batch', ops: [{ __op: 'AddRelation', objects: [ptr('6')] }] },
      g: { __type: 'Object', className: 'Customer', objectId: '7', name: 'n' },
    });
    expect(found.map((p) => [p.field, p.objectId])).toEqual([
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
      ['d', '4'],
      ['e', '5'],
      ['f', '6'],
      ['g', '7'],
    ]);
  });

  it('leaves out operations that only take links away, and values that name no object', () => {
    expect(
      pointersWritten({
        a: { __op: 'Remove', objects: [ptr('1')] },
        b: { __op: 'RemoveRelation', objects: [ptr('2')] },
        c: { __op: 'Delete' },
        d: 'Customer$3',
        e: { __type: 'Date', iso: '2024-01-01T00:00:00.000Z' },
      }),
    ).toEqual([]);
  });

  it('refuses a pointer without an objectId, and values nested past the depth cap', () => {
    expect(() => pointersWritten({ a: { __type: 'Pointer', className: 'Customer' } })).toThrow(
      AgentValidationError,
    );
    let deep: unknown = ptr('1');
    for (let i = 0; i < 12; i++) deep = { inner: deep };
    expect(() => pointersWritten({ a: deep })).toThrow(/nested too deeply/);
  });
});

describe('assertPointersReadable', () => {
  it('passes pointers to rows a read of their class returns, reading each class once', async () => {
    const finds: DataFindQuery[] = [];
    await assertPointersReadable(policy(), () => readPath(finds), {
      a: ptr('mine'),
      b: [ptr('mine2'), ptr('mine')],
    });
    expect(finds).toHaveLength(1);
    // The class's tenant, canonical filter and the agent's filter, and only the ids named.
    const where = JSON.stringify(finds[0].where);
    for (const part of ['"tenantId":"acme"', '"isDeleted":{"$ne":true}', '"$ne":"filtered"']) {
      expect(where).toContain(part);
    }
    expect(finds[0].keys).toEqual(['objectId']);
  });

  it('refuses another tenant, a soft-deleted row and a missing one with the same answer', async () => {
    const messages: string[] = [];
    for (const id of ['theirs', 'gone', 'nope']) {
      const refusal = assertPointersReadable(policy(), () => readPath(), {
        customer: ptr(id),
      });
      await expect(refusal).rejects.toMatchObject({
        errorCode: 'access_denied',
        details: { kind: 'unreadable_pointer', denied_field: 'customer' },
      });
      const error = await refusal.catch((e: Error) => e);
      expect(isPointerRefusal(error)).toBe(true);
      messages.push((error as Error).message.replace(id, '<id>'));
    }
    expect(new Set(messages).size).toBe(1);
  });

  it('refuses a hidden or missing class without reading, and a class the identity may not read', async () => {
    const finds: DataFindQuery[] = [];
    for (const className of ['Vault', 'Nowhere']) {
      await expect(
        assertPointersReadable(policy(), () => readPath(finds), { a: ptr('v1', className) }),
      ).rejects.toMatchObject({ details: { kind: 'unreadable_pointer' } });
    }
    expect(finds).toEqual([]);
    for (const fail of [
      new ParseRequestError('Parse error: Permission denied', 119, 403),
      new AccessDeniedError('CLP', { kind: 'clp_denied' }),
    ]) {
      await expect(
        assertPointersReadable(policy(), () => readPath([], fail), { a: ptr('mine') }),
      ).rejects.toMatchObject({ details: { kind: 'unreadable_pointer' } });
    }
    // Anything else is not a verdict on the row: it fails the write as it is.
    const down = new ParseRequestError('Parse error: unavailable', undefined, 503);
    await expect(
      assertPointersReadable(policy(), () => readPath([], down), { a: ptr('mine') }),
    ).rejects.toBe(down);
  });
});

describe('pointerCheckedWrites', () => {
  function writePath(log: string[]): DataPath & { checkWrite(): Promise<void> } {
    return {
      ...readPath(),
      kind: 'writes',
      async create(className) {
        log.push(`create ${className}`);
        return { objectId: 'new' };
      },
      async update(className, objectId) {
        log.push(`update ${className} ${objectId}`);
        return {};
      },
      async delete(className, objectId) {
        log.push(`delete ${className} ${objectId}`);
      },
      async checkWrite() {
        log.push('checkWrite');
      },
    };
  }

  it('checks create and update before writing, and writes nothing when refused', async () => {
    const log: string[] = [];
    const path = pointerCheckedWrites(writePath(log), policy(), () => readPath());
    await path.create!('Order', { customer: ptr('mine') });
    await path.update!('Order', 'o1', { customer: ptr('mine') });
    await expect(path.create!('Order', { customer: ptr('theirs') })).rejects.toMatchObject({
      details: { kind: 'unreadable_pointer' },
    });
    await expect(
      path.update!('Order', 'o1', { customers: { __op: 'AddRelation', objects: [ptr('gone')] } }),
    ).rejects.toMatchObject({ details: { kind: 'unreadable_pointer' } });
    expect(log).toEqual(['create Order', 'update Order o1']);
  });

  it('passes everything else through: deletes and the path’s own pre-checks', async () => {
    const log: string[] = [];
    const path = pointerCheckedWrites(writePath(log), policy(), () => readPath());
    await path.delete!('Order', 'o1');
    await (path as unknown as { checkWrite(): Promise<void> }).checkWrite();
    expect(path.kind).toBe('writes');
    expect(log).toEqual(['delete Order o1', 'checkWrite']);
  });
});
