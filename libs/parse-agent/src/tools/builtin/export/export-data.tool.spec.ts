import 'reflect-metadata';
import { inMemoryAgentServices } from '../../../../../../test/fixtures/in-memory-agent';
import { ParseAgent } from '../../../agent/parse-agent';
import { suppressSecurityBanners } from '../../../core/security-banner';
import { AgentHidden } from '../../../metadata/decorators/agent-hidden.decorator';
import { ParseClass } from '../../../metadata/decorators/parse-class.decorator';
import { parseColumns } from './export-data.tool';

@ParseClass('Order')
class OrderModel {}

@ParseClass('Payroll')
@AgentHidden()
class PayrollModel {}

const orders = Array.from({ length: 7 }, (_, i) => ({
  objectId: `o${i + 1}`,
  status: i % 2 ? 'open' : 'paid',
  amount: (i + 1) * 10,
  shipping: { city: i < 3 ? 'Oslo' : 'Lyon' },
}));

function setup() {
  const memory = inMemoryAgentServices({
    schemas: {
      Order: { status: 'String', amount: 'Number', shipping: 'Object' },
      Payroll: { amount: 'Number' },
    },
    rows: { Order: orders, Payroll: [{ objectId: 'p1', amount: 9000 }] },
    models: [OrderModel, PayrollModel],
  });
  return { ...memory, agent: new ParseAgent({}, memory.services) };
}

type Exported = Record<string, unknown> & { output: string; headers: string[] };
const dataOf = (result: unknown) => (result as { data: Exported }).data;

beforeAll(() => suppressSecurityBanners());

describe('export_data', () => {
  it('renames and reaches into nested fields with columns, in the given order', async () => {
    const { agent } = setup();
    const result = await agent.execute('export_data', {
      class_name: 'Order',
      columns: [{ 'shipping.city': 'City' }, 'objectId', { amount: 'Total' }],
      where: { status: 'paid' },
      order: 'amount',
    });
    expect(result.success).toBe(true);
    const data = dataOf(result);
    expect(data.headers).toEqual(['City', 'objectId', 'Total']);
    expect(data.output.trim().split('\n')).toEqual([
      'City,objectId,Total',
      'Oslo,o1,10',
      'Oslo,o3,30',
      'Lyon,o5,50',
      'Lyon,o7,70',
    ]);
    expect(data).toMatchObject({ row_count: 4, pagination: { skip: 0, has_more: false } });
    expect(data).not.toHaveProperty('truncated');
    expect(data).not.toHaveProperty('next_call');
  });

  it('stops at row_cap, counts what is available and offers the next page as a ready call', async () => {
    const { agent, calls } = setup();
    const args = { class_name: 'Order', order: 'amount', row_cap: 3, keys: ['amount'] };
    const data = dataOf(await agent.execute('export_data', args));
    expect(data).toMatchObject({
      row_count: 3,
      truncated: true,
      available_rows: 7,
      row_cap: 3,
      pagination: { row_cap: 3, skip: 0, has_more: true },
      next_call: { tool: 'export_data', arguments: { ...args, skip: 3 } },
    });
    // One row past the cap is read to tell truncation; the count runs only because it was.
    expect(calls.map((c) => c.operation)).toEqual(['find', 'count']);
    expect((calls[0].detail as { limit: number }).limit).toBe(4);

    calls.length = 0;
    const last = dataOf(await agent.execute('export_data', { ...args, skip: 6 }));
    expect(last).toMatchObject({ row_count: 1, pagination: { skip: 6, has_more: false } });
    expect(calls.map((c) => c.operation)).toEqual(['find']);
  });

  it('renders a markdown table when asked', async () => {
    const { agent } = setup();
    const md = dataOf(
      await agent.execute('export_data', {
        class_name: 'Order',
        format: 'markdown',
        columns: ['objectId'],
        row_cap: 1,
        order: 'objectId',
      }),
    );
    expect(md.format).toBe('markdown');
    expect(md.output).toContain('| objectId |');
    expect(md.output).toContain('| o1 |');
  });

  it('refuses a bad format, row_cap or columns before reading anything', async () => {
    const { agent, calls } = setup();
    for (const bad of [
      { format: 'xlsx' },
      { row_cap: 0 },
      { row_cap: 10_001 },
      { row_cap: 2.5 },
      { columns: [] },
      { columns: [{ a: 'A', b: 'B' }] },
      { columns: [{ a: 1 }] },
    ]) {
      const result = await agent.execute('export_data', { class_name: 'Order', ...bad });
      expect(result).toMatchObject({ success: false, error_code: 'invalid_argument' });
    }
    expect(calls).toEqual([]);
  });

  it('never exports a hidden class, and reads nothing from it', async () => {
    const { agent, calls } = setup();
    const result = await agent.execute('export_data', { class_name: 'Payroll' });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result)).not.toContain('9000');
    expect(calls).toEqual([]);
  });

  it('in pipeline mode truncates without a next_call (a pipeline has no skip to resume from)', async () => {
    const { agent, calls } = setup();
    const data = dataOf(
      await agent.execute('export_data', {
        class_name: 'Order',
        pipeline: [{ $sort: { amount: -1 } }, { $project: { amount: 1 } }],
        columns: ['amount'],
        row_cap: 2,
      }),
    );
    expect(data.output.trim().split('\n')).toEqual(['amount', '70', '60']);
    expect(data).toMatchObject({ truncated: true, pagination: { has_more: true } });
    expect(data).not.toHaveProperty('next_call');
    // The rows, then the same pipeline counted for available_rows.
    expect(calls.map((c) => c.operation)).toEqual(['aggregate', 'aggregate']);
    expect(data.available_rows).toBe(7);
  });
});

describe('parseColumns', () => {
  it('accepts names and single-entry { field: header } objects, and nothing else', () => {
    expect(parseColumns(undefined)).toBeUndefined();
    expect(parseColumns(null)).toBeUndefined();
    expect(parseColumns(['a', { 'b.c': 'B' }])).toEqual([
      { field: 'a', header: 'a' },
      { field: 'b.c', header: 'B' },
    ]);
    expect(() => parseColumns('a')).toThrow(/non-empty array/);
    expect(() => parseColumns([''])).toThrow(/columns\[0\]/);
    expect(() => parseColumns(['a', ['b']])).toThrow(/columns\[1\]/);
  });

  it('refuses a column through an internal field, at any depth and under any header', () => {
    for (const spec of [
      '_hashed_password',
      { sessionToken: 'Token' },
      'authData.anonymous.id',
      'owner._auth_data_github',
      { 'buyer._rperm': 'Readers' },
    ]) {
      expect(() => parseColumns(['title', spec])).toThrow(
        expect.objectContaining({ errorCode: 'access_denied', kind: 'internal_field' }),
      );
    }
  });
});
