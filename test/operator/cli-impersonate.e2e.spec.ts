import { seedDemo } from '../harness/demo-data';
import { parseRest } from '../harness/parse-rest';
import { cliEnv, DEMO_MODELS, runCliProcess } from '../cli/cli-process';

/**
 * `parse-agent --impersonate <userId>` (issue 36 item 1), as a child process against the real
 * Parse Server: the operator acts as the user, with the user's own session, so the answer is the
 * user's; only the master key may do it.
 */
describe('parse-agent --impersonate (child process, real Parse Server)', () => {
  let alice: { token: string; objectId: string };
  const models = ['--models', DEMO_MODELS];

  beforeAll(async () => {
    const tokens = await seedDemo();
    const me = await parseRest<{ objectId: string }>('GET', '/users/me', undefined, {
      sessionToken: tokens.alice,
    });
    alice = { token: tokens.alice, objectId: me.objectId };
  }, 60_000);

  const count = async (args: string[], env: Record<string, string>) => {
    const run = await runCliProcess(
      [...models, ...args, 'call', 'count_objects', '{"class_name":"Order"}'],
      env,
    );
    return {
      ...run,
      count: run.code === 0 ? (JSON.parse(run.stdout).data.count as number) : undefined,
    };
  };

  it('answers as the user: the same count as the user’s own session, not the operator’s', async () => {
    const asUser = await count(
      [],
      cliEnv({ PARSE_SESSION_TOKEN: alice.token, PARSE_AGENT_TENANT_ID: 'acme' }),
    );
    const operator = await count([], cliEnv());
    const impersonated = await count(
      ['--impersonate', alice.objectId, '--tenant', 'acme'],
      cliEnv(),
    );
    expect(impersonated.code).toBe(0);
    expect(impersonated.count).toBe(asUser.count);
    expect(operator.count).toBeGreaterThan(asUser.count!);
    // Whom it acted as: the user's session, not the master key scoped to the tenant.
    const described = await runCliProcess(
      [...models, '--impersonate', alice.objectId, '--tenant', 'acme', 'describe'],
      cliEnv(),
    );
    expect(described.code).toBe(0);
    expect(JSON.parse(described.stdout)).toMatchObject({
      auth: {
        mode: 'session_token',
        impersonating: { user: alice.objectId, label: 'parse-agent CLI' },
      },
    });
    expect(described.stdout).not.toContain(alice.token);
  }, 60_000);

  it('is refused with a session token, and for anything but a _User objectId', async () => {
    const withToken = await count(
      ['--impersonate', alice.objectId],
      cliEnv({ PARSE_SESSION_TOKEN: alice.token, PARSE_AGENT_TENANT_ID: 'acme' }),
    );
    expect(withToken.code).toBe(2);
    expect(withToken.stderr).toMatch(/--impersonate needs the master key/);
    const bad = await count(['--impersonate', 'not an id'], cliEnv());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--impersonate takes a _User objectId/);
    const unknown = await count(['--impersonate', 'NoSuchUser9', '--tenant', 'acme'], cliEnv());
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/no _User NoSuchUser9/);
  }, 60_000);
});
