import { createObject } from '../harness/fixtures';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';

/** Grouping by a pointer into a hidden class must refuse without naming that class. */
describe('analytics on a pointer field whose target class is hidden', () => {
  let bed: AgentTestBed;
  const run = Date.now().toString(36);
  const SECRET = `SecretVault_${run}`;
  const HOLDER = `VaultHolder_${run}`;

  beforeAll(async () => {
    const vaultId = await createObject(SECRET, { code: 'x' });
    await createObject(HOLDER, {
      vault: { __type: 'Pointer', className: SECRET, objectId: vaultId },
    });
    bed = await createAgentTestBed([], {
      unregisteredClasses: 'visible',
      hiddenClasses: [SECRET],
    });
  });
  afterAll(() => bed.close());

  it.each(['group_by', 'distinct'])('%s refuses and does not reveal the target', async (tool) => {
    const result = await bed.factory.create().execute(tool, { class_name: HOLDER, field: 'vault' });
    expect(result).toMatchObject({
      success: false,
      error_code: 'access_denied',
      details: { kind: 'class_not_found' },
    });
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });
});
