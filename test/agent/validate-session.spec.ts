import { AgentUnauthorizedError, ParseAgentConfigError } from 'nestjs-parse-agent';
import { ParseRestClient } from 'nestjs-parse-agent/data/parse-rest/parse-rest-client';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { createUser } from '../harness/fixtures';
import { parseRest } from '../harness/parse-rest';

/**
 * Eager session validation (validateSession / factory.createValidated) against the real Parse
 * Server: a logged-out token is refused when the agent is created, before any tool can run, and a
 * valid one costs a single cached /users/me.
 */
const run = Date.now().toString(36);

describe('ParseAgentFactory.createValidated', () => {
  let bed: AgentTestBed;
  let meCalls: () => number;
  let runs = 0;
  const probe = `vs_probe_${run}`;

  beforeAll(async () => {
    bed = await createAgentTestBed([]);
    const rest = bed.module.get(ParseRestClient);
    const spy = jest.spyOn(rest, 'request');
    meCalls = () => spy.mock.calls.filter((call) => call[1] === '/users/me').length;
    bed.tools.register({
      name: probe,
      description: 'Counts its runs.',
      inputSchema: { type: 'object', properties: {} },
      handler: () => ({ runs: ++runs }),
    });
  });
  afterAll(() => bed?.close());

  it('returns an agent for a live session, asking /users/me once for repeated creations', async () => {
    const user = await createUser(`vs_live_${run}`);
    const before = meCalls();
    const agent = await bed.factory.createValidated({ sessionToken: user.sessionToken });
    await bed.factory.createValidated({ sessionToken: user.sessionToken });
    expect(agent.sessionToken).toBe(user.sessionToken);
    expect(meCalls() - before).toBe(1);
    await expect(agent.execute(probe)).resolves.toMatchObject({ success: true });
  });

  it('rejects a logged-out token with AgentUnauthorizedError before any tool runs', async () => {
    const user = await createUser(`vs_out_${run}`);
    await parseRest('POST', '/logout', {}, { sessionToken: user.sessionToken });
    const runsBefore = runs;
    await expect(
      bed.factory.createValidated({ sessionToken: user.sessionToken }),
    ).rejects.toBeInstanceOf(AgentUnauthorizedError);
    expect(runs).toBe(runsBefore);
    // Without validation the same token builds an agent; Parse refuses it only per call.
    const lazy = bed.factory.create({ sessionToken: user.sessionToken });
    expect(lazy.sessionToken).toBe(user.sessionToken);
  });

  it('rejects an unknown token', async () => {
    await expect(
      bed.factory.createValidated({ sessionToken: `r:not-a-session-${run}` }),
    ).rejects.toBeInstanceOf(AgentUnauthorizedError);
  });

  it('refuses validateSession on the synchronous create(), naming createValidated', () => {
    expect(() => bed.factory.create({ validateSession: true, sessionToken: 'r:x' })).toThrow(
      ParseAgentConfigError,
    );
    expect(() => bed.factory.create({ validateSession: true })).toThrow(/createValidated/);
  });

  it('accepts validateSession: true through createValidated', async () => {
    const user = await createUser(`vs_flag_${run}`);
    const agent = await bed.factory.createValidated({
      sessionToken: user.sessionToken,
      validateSession: true,
    });
    expect(agent.authType).toBe('session_token');
  });
});
