import { AccessDeniedError } from '../../../core/errors';
import type { DataPath, DataRow } from '../../../ports/data-path';
import { methodDataPath, writtenKeys } from './method-data-path';

/** An in-memory data path: rows per class, in a Map the tests can look into. */
class MemoryPath implements DataPath {
  readonly kind = 'memory';
  readonly rows = new Map<string, DataRow>();
  private next = 0;
  find(): Promise<DataRow[]> {
    return Promise.resolve([...this.rows.values()]);
  }
  get(_c: string, id: string): Promise<DataRow | undefined> {
    return Promise.resolve(this.rows.get(id));
  }
  count(): Promise<number> {
    return Promise.resolve(this.rows.size);
  }
  create(_c: string, values: DataRow) {
    const objectId = `id${++this.next}`;
    this.rows.set(objectId, { objectId, ...values });
    return Promise.resolve({ objectId });
  }
  update(_c: string, id: string, values: DataRow) {
    if (!this.rows.has(id)) return Promise.reject(new Error('Object not found'));
    this.rows.set(id, { ...this.rows.get(id), ...values });
    return Promise.resolve({});
  }
  delete(_c: string, id: string) {
    this.rows.delete(id);
    return Promise.resolve();
  }
}

describe('methodDataPath', () => {
  it('records each successful write with the field names written, never values', async () => {
    const inner = new MemoryPath();
    const { path, writes } = methodDataPath(inner);
    const { objectId } = await path.create!('Refund', { order: 'o1', amount: 40 });
    await path.update!('Order', objectId, { status: 'refunded', refundedAt: 'now' });
    await path.delete!('Refund', objectId);
    await expect(path.update!('Order', 'missing', { note: 'x' })).rejects.toThrow();
    expect(writes).toEqual([
      {
        action: 'create',
        class_name: 'Refund',
        object_id: 'id1',
        changed_keys: ['amount', 'order'],
      },
      {
        action: 'update',
        class_name: 'Order',
        object_id: 'id1',
        changed_keys: ['refundedAt', 'status'],
      },
      { action: 'delete', class_name: 'Refund', object_id: 'id1', changed_keys: [] },
    ]);
    expect(JSON.stringify(writes)).not.toContain('refunded"');
    expect(writtenKeys(writes)).toEqual(['amount', 'order', 'refundedAt', 'status']);
  });

  it('passes reads through to the path, bound to it', async () => {
    const inner = new MemoryPath();
    await inner.create('Order', { status: 'paid' });
    const { path, writes } = methodDataPath(inner, 'a preview may not write');
    expect(path.kind).toBe('memory');
    expect(await path.count('Order', {})).toBe(1);
    expect(await path.get('Order', 'id1', {})).toMatchObject({ status: 'paid' });
    expect(writes).toEqual([]);
  });

  it('refuses every write when given a refusal, and changes nothing', async () => {
    const inner = new MemoryPath();
    await inner.create('Order', { status: 'paid' });
    const { path, writes } = methodDataPath(inner, "'Order.refund' was called with dry_run: true");
    await expect(path.update!('Order', 'id1', { status: 'refunded' })).rejects.toThrow(
      AccessDeniedError,
    );
    await expect(path.create!('Order', { status: 'x' })).rejects.toThrow(
      "'Order.refund' was called with dry_run: true (it tried create on 'Order').",
    );
    await expect(path.delete!('Order', 'id1')).rejects.toThrow(AccessDeniedError);
    expect(inner.rows.get('id1')).toMatchObject({ status: 'paid' });
    expect(inner.rows.size).toBe(1);
    expect(writes).toEqual([]);
  });

  it('leaves a write the path lacks absent', () => {
    const inner = new MemoryPath() as Partial<MemoryPath>;
    delete (inner as { createClass?: unknown }).createClass;
    const { path } = methodDataPath(inner as DataPath);
    expect(path.createClass).toBeUndefined();
  });
});
