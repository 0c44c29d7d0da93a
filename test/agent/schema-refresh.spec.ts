import { createObject } from '../harness/fixtures';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';

/** A class created after the schemas were cached (a seed, a migration) must not stay "not found". */
describe('schema cache and classes created after it was filled', () => {
  let bed: AgentTestBed;
  const run = Date.now().toString(36);
  const EARLY = `RefreshEarly_${run}`;
  const LATE = `RefreshLate_${run}`;

  beforeAll(async () => {
    await createObject(EARLY, { n: 1 });
    // A long TTL, as in production: only a miss may refresh the cache.
    bed = await createAgentTestBed([], {
      schemaCacheTtlMs: 60_000,
      unregisteredClasses: 'visible',
    });
  });
  afterAll(() => bed.close());

  it('refetches the schemas once on a miss, so the new class answers', async () => {
    const agent = bed.factory.create();
    expect(await agent.execute('count_objects', { class_name: EARLY })).toMatchObject({
      success: true,
      data: { count: 1 },
    });
    await createObject(LATE, { n: 2 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await agent.execute('count_objects', { class_name: LATE })).toMatchObject({
      success: true,
      data: { count: 1 },
    });
  });

  it('still answers "not found" for a class that does not exist', async () => {
    const agent = bed.factory.create();
    expect(await agent.execute('count_objects', { class_name: `Nope_${run}` })).toMatchObject({
      success: false,
      error_code: 'access_denied',
      details: { kind: 'class_not_found' },
    });
  });
});
