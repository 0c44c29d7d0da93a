import { DeclaredNamesReporter } from 'nestjs-parse-agent/nest/declared-names.reporter';
import { createObject } from '../harness/fixtures';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';

/**
 * A class created after the schemas were cached (a seed, a migration, a class made through Parse a
 * moment ago) must not answer "not found", however young the cached copy is: a miss asks Parse
 * again before the class is called unknown. No test here waits for the cache to age.
 */
describe('schema cache and classes created after it was filled', () => {
  let bed: AgentTestBed;
  const run = Date.now().toString(36);
  const EARLY = `RefreshEarly_${run}`;

  const count = (className: string) =>
    bed.factory.create().execute('count_objects', { class_name: className });

  beforeAll(async () => {
    await createObject(EARLY, { n: 1 });
    // A long TTL, as in production: only a miss may refresh the cache.
    bed = await createAgentTestBed([], {
      schemaCacheTtlMs: 60_000,
      unregisteredClasses: 'visible',
    });
  });
  afterAll(() => bed.close());

  it('finds a class created just after the boot-time report filled the cache', async () => {
    // The boot report reads every schema (this is how the cache came to predate new classes).
    await bed.module.get(DeclaredNamesReporter, { strict: false }).report;
    const born = `RefreshAfterBoot_${run}`;
    await createObject(born, { n: 1 });
    expect(await count(born)).toMatchObject({ success: true, data: { count: 1 } });
  });

  it('finds a class created right after the cache was filled by a read', async () => {
    expect(await count(EARLY)).toMatchObject({ success: true, data: { count: 1 } });
    const late = `RefreshLate_${run}`;
    await createObject(late, { n: 2 });
    expect(await count(late)).toMatchObject({ success: true, data: { count: 1 } });
  });

  it('a name that was unknown a moment ago answers once the class exists', async () => {
    const name = `RefreshAgain_${run}`;
    for (let round = 0; round < 3; round++) {
      expect(await count(`${name}_${round}`)).toMatchObject({
        success: false,
        details: { kind: 'class_not_found' },
      });
      await createObject(`${name}_${round}`, { round });
      expect(await count(`${name}_${round}`)).toMatchObject({
        success: true,
        data: { count: 1 },
      });
    }
  });

  it('still answers "not found" for a class that does not exist', async () => {
    expect(await count(`Nope_${run}`)).toMatchObject({
      success: false,
      error_code: 'access_denied',
      details: { kind: 'class_not_found' },
    });
  });
});
