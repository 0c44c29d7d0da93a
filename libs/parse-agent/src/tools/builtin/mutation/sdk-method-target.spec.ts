import Parse from 'parse/node';
import { ParseAgentConfigError } from '../../../core/errors';
import type { DataPath } from '../../../ports/data-path';
import { sdkMethodTarget } from './sdk-method-target';

class Invoice extends Parse.Object {
  constructor() {
    super('Invoice');
  }

  get status(): string {
    return this.get('status') as string;
  }
}

/** Never reached: these cases fail or read before any write. */
const noWrites = { kind: 'none' } as unknown as DataPath;

const options = (row: Record<string, unknown>) => ({
  className: 'Invoice',
  qualified: 'Invoice.settle',
  row,
  data: noWrites,
  signal: new AbortController().signal,
});

describe('sdkMethodTarget', () => {
  afterEach(() => Parse.Object.disableSingleInstance());

  it('builds an instance of the model holding exactly the row, clean and saved', () => {
    const row = { objectId: 'inv1', status: 'open', createdAt: '2024-01-02T03:04:05.000Z' };
    const { object } = sdkMethodTarget(Invoice, options(row));
    const invoice = object as Invoice;
    expect(invoice).toBeInstanceOf(Invoice);
    expect(invoice.id).toBe('inv1');
    expect(invoice.status).toBe('open');
    expect(invoice.existed()).toBe(true);
    expect(invoice.dirtyKeys()).toEqual([]);
    expect(Object.keys(invoice.attributes).sort()).toEqual(['createdAt', 'status', 'updatedAt']);
  });

  it('refuses a model that builds objects of another class', () => {
    expect(() =>
      sdkMethodTarget(Invoice, { ...options({ objectId: 'x' }), className: 'Bill' }),
    ).toThrow("Model Invoice builds objects of class 'Invoice', but is registered for 'Bill'");
  });

  it('fails closed when the SDK shares state between instances of one object', () => {
    Parse.Object.enableSingleInstance();
    // The application loaded the object earlier, with a field the agent may not read.
    const appCopy = new Invoice();
    appCopy.id = 'inv2';
    (appCopy as unknown as { _finishFetch(d: object): void })._finishFetch({
      objectId: 'inv2',
      status: 'open',
      margin: 12,
    });
    expect(() => sdkMethodTarget(Invoice, options({ objectId: 'inv2', status: 'open' }))).toThrow(
      ParseAgentConfigError,
    );
    expect(() => sdkMethodTarget(Invoice, options({ objectId: 'inv2', status: 'open' }))).toThrow(
      /single-instance mode.*Parse\.Object\.disableSingleInstance\(\)/,
    );
  });
});
