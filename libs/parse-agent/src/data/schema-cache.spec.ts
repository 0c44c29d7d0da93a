import type { ParseSchema } from '../core/parse-schema';
import { AgentCancelledError, ToolTimeoutError } from '../core/errors';
import type { ParseRestClient } from './parse-rest/parse-rest-client';
import { SchemaCache } from './schema-cache';

/** A stand-in for the REST client's schemas() call whose answer the test releases by hand. */
function pendingSchemas() {
  const calls: Array<(list: ParseSchema[]) => void> = [];
  const client = {
    schemas: () => new Promise<ParseSchema[]>((resolve) => calls.push(resolve)),
  } as unknown as ParseRestClient;
  return { client, calls };
}

const ORDER = { className: 'Order', fields: {} } as unknown as ParseSchema;

describe('SchemaCache', () => {
  it('shares one fetch between concurrent callers and answers from the copy until it expires', async () => {
    let now = 1_000;
    const { client, calls } = pendingSchemas();
    const cache = new SchemaCache(client, 30_000, () => now);
    const first = cache.get('Order');
    const second = cache.all();
    expect(calls).toHaveLength(1);
    calls[0]([ORDER]);
    await expect(first).resolves.toBe(ORDER);
    expect((await second).get('Order')).toBe(ORDER);

    now += 29_999;
    await cache.get('Order');
    expect(calls).toHaveLength(1);
    now += 1;
    const refetch = cache.get('Order');
    expect(calls).toHaveLength(2);
    calls[1]([]);
    await expect(refetch).resolves.toBeUndefined();
  });

  it("one caller's abort stops only that caller's wait; the shared fetch still serves the others", async () => {
    const { client, calls } = pendingSchemas();
    const cache = new SchemaCache(client);
    const controller = new AbortController();
    const aborted = cache.get('Order', controller.signal);
    const patient = cache.get('Order');
    controller.abort();
    await expect(aborted).rejects.toBeInstanceOf(AgentCancelledError);
    calls[0]([ORDER]);
    await expect(patient).resolves.toBe(ORDER);
    expect(calls).toHaveLength(1);
  });

  it('rejects with an error given as the abort reason (a tool timeout stays a timeout)', async () => {
    const { client } = pendingSchemas();
    const cache = new SchemaCache(client);
    const controller = new AbortController();
    const timeout = new ToolTimeoutError('get_schema', 1);
    controller.abort(timeout);
    await expect(cache.all(controller.signal)).rejects.toBe(timeout);
  });

  it('drops a failed fetch so the next caller tries again', async () => {
    let attempt = 0;
    const client = {
      schemas: () =>
        ++attempt === 1 ? Promise.reject(new Error('parse down')) : Promise.resolve([ORDER]),
    } as unknown as ParseRestClient;
    const cache = new SchemaCache(client);
    await expect(cache.all()).rejects.toThrow('parse down');
    await expect(cache.get('Order')).resolves.toBe(ORDER);
  });

  it('invalidate() drops the copy, so the next read fetches again', async () => {
    const { client, calls } = pendingSchemas();
    const cache = new SchemaCache(client);
    const warm = cache.all();
    calls[0]([ORDER]);
    await warm;
    await cache.all();
    expect(calls).toHaveLength(1);
    cache.invalidate();
    void cache.all();
    expect(calls).toHaveLength(2);
  });

  it('fresh() fetches again however young the copy is, and the answer becomes the copy', async () => {
    const now = 1_000;
    const { client, calls } = pendingSchemas();
    const cache = new SchemaCache(client, 30_000, () => now);
    const warm = cache.all();
    calls[0]([]);
    await warm;
    // Same instant as the copy: a class created since is still found.
    const fresh = cache.fresh();
    expect(calls).toHaveLength(2);
    calls[1]([ORDER]);
    expect((await fresh).get('Order')).toBe(ORDER);
    await expect(cache.get('Order')).resolves.toBe(ORDER);
    expect(calls).toHaveLength(2);
  });

  it('fresh() waits out a fetch that started before it, then one new fetch serves every waiter', async () => {
    const { client, calls } = pendingSchemas();
    const cache = new SchemaCache(client);
    const early = cache.all();
    const first = cache.fresh();
    const second = cache.fresh();
    expect(calls).toHaveLength(1);
    calls[0]([]);
    await expect(early).resolves.toEqual(new Map());
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(2);
    calls[1]([ORDER]);
    for (const answer of [first, second]) {
      expect((await answer).get('Order')).toBe(ORDER);
    }
    expect(calls).toHaveLength(2);
  });

  it('fresh() reports its own fetch failing, not an earlier one', async () => {
    let attempt = 0;
    const releases: Array<() => void> = [];
    const client = {
      schemas: () => {
        attempt++;
        if (attempt === 1) {
          return new Promise<ParseSchema[]>((_, reject) =>
            releases.push(() => reject(new Error('parse down'))),
          );
        }
        return Promise.resolve([ORDER]);
      },
    } as unknown as ParseRestClient;
    const cache = new SchemaCache(client);
    const early = cache.all();
    const fresh = cache.fresh();
    releases[0]();
    await expect(early).rejects.toThrow('parse down');
    expect((await fresh).get('Order')).toBe(ORDER);
  });
});
