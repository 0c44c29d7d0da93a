import type { ParseAgent } from 'nestjs-parse-agent';
import { CORE_MODELS, SupportTicket } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { ok, refused, type Data } from '../harness/envelopes';
import { seedDemo } from '../harness/demo-data';
import { createObject } from '../harness/fixtures';

describe('results that say what they left out, and errors that point somewhere (demo dataset)', () => {
  let bed: AgentTestBed;
  let master: ParseAgent;
  let alice: ParseAgent;

  beforeAll(async () => {
    const tokens = await seedDemo();
    bed = await createAgentTestBed(CORE_MODELS);
    bed.metadata.register(SupportTicket);
    // A class no model declares (so no allowlist), opened by name.
    bed.metadata.unhide('HonestProbe');
    await createObject('HonestProbe', { title: 'probe', rank: 3 });
    master = bed.factory.create();
    alice = bed.factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
  }, 60_000);

  afterAll(() => bed.close());

  it('names Customer.email as withheld for alice (protectedFields), never its value', async () => {
    const data = ok(await alice.execute('query_class', { class_name: 'Customer', limit: 5 }));
    expect(data.results.length).toBeGreaterThan(0);
    expect(data.results.some((r: Data) => 'email' in r)).toBe(false);
    expect(data.withheld_fields).toMatchObject({ email: 'protected' });
    expect(data.withheld_note).toContain('protectedFields');
    expect(JSON.stringify(data)).not.toMatch(/@/);
    // The master key sees the field, so nothing is reported withheld.
    const full = ok(await master.execute('query_class', { class_name: 'Customer', limit: 5 }));
    expect(full.results.every((r: Data) => typeof r.email === 'string')).toBe(true);
    expect(full).not.toHaveProperty('withheld_fields');
  });

  it('leaves large fields out unless keys names them, and says so', async () => {
    const lean = ok(await master.execute('query_class', { class_name: 'SupportTicket', limit: 3 }));
    expect(lean.elided_fields).toEqual(['body']);
    expect(lean.results.some((r: Data) => 'body' in r)).toBe(false);
    const asked = ok(
      await master.execute('query_class', {
        class_name: 'SupportTicket',
        limit: 3,
        keys: ['subject', 'body'],
      }),
    );
    expect(asked).not.toHaveProperty('elided_fields');
    expect(asked.results.every((r: Data) => typeof r.body === 'string')).toBe(true);
  });

  it('pages csv like json: has_more and a next_call that resumes after the last row shown', async () => {
    const page = ok(
      await master.execute('query_class', {
        class_name: 'Order',
        limit: 1000,
        format: 'csv',
        order: 'orderNumber',
      }),
    );
    expect(page.row_count).toBeLessThan(1000);
    expect(page.output.length).toBeLessThanOrEqual(34 * 1024);
    expect(page.pagination).toEqual({ limit: 1000, skip: 0, has_more: true });
    expect(page.next_call.arguments).toMatchObject({ format: 'csv', skip: page.row_count });
  });

  it('refuses a where value of the wrong type before Parse sees it, naming the fix', async () => {
    const res = refused(
      await master.execute('query_class', {
        class_name: 'Order',
        where: { total: { $gt: 'abc' } },
      }),
    );
    expect(res.error_code).toBe('invalid_query');
    expect(res.error).toContain("where.total.$gt: 'total' is a Number field");
    expect(res.error).toContain('a number');
    expect(res.error).not.toContain('internal server error');
  });

  it('tells an unknown field from a denied one, without confirming hidden names', async () => {
    // Without an allowlist every field is visible: a misspelt one is unknown, with close names.
    const unknown = refused(
      await master.execute('query_class', { class_name: 'HonestProbe', order: 'titel' }),
    );
    expect(unknown.error_code).toBe('invalid_query');
    expect(unknown.details).toMatchObject({ kind: 'unknown_field', suggestions: ['title'] });
    ok(await master.execute('query_class', { class_name: 'HonestProbe', order: '-rank' }));
    // Order has an allowlist: a name outside it is denied the same way whether it exists or not.
    const missing = refused(
      await master.execute('query_class', { class_name: 'Order', order: 'nosuchfield' }),
    );
    const hidden = refused(
      await master.execute('query_class', { class_name: 'Order', order: 'isDeleted' }),
    );
    for (const res of [missing, hidden]) {
      expect(res.error_code).toBe('access_denied');
      expect(res.details).toMatchObject({ kind: 'field_denied' });
      expect(res.error).toContain('whether such a field exists is not said');
    }
  });
});
