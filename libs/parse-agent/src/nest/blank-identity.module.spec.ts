import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import { UNUSABLE_IDENTITIES } from '../../../../test/fixtures/blank-identities';
import { ParseAgent } from '../agent/parse-agent';
import { AgentUnauthorizedError, ParseAgentConfigError } from '../core/errors';
import { suppressSecurityBanners } from '../core/security-banner';
import { agentFromFactoryResult } from '../transport/shared/resolve-agent';
import { ParseAgentFactory } from './parse-agent.factory';
import { ParseAgentModule } from './parse-agent.module';

/**
 * Nothing listens here. A session check that reached Parse would fail as "unavailable" (503), so a
 * blank token answered with AgentUnauthorizedError was refused before any check ran.
 */
const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

describe('the factory and the agentFactory result refuse blank identities', () => {
  let moduleRef: TestingModule;
  let factory: ParseAgentFactory;

  beforeAll(async () => {
    suppressSecurityBanners();
    moduleRef = await Test.createTestingModule({
      imports: [ParseAgentModule.forRoot({ parse, auth: { session: { timeoutMs: 200 } } })],
    }).compile();
    factory = moduleRef.get(ParseAgentFactory);
  });
  afterAll(() => moduleRef?.close());

  it('createValidated refuses a blank token before checking it, never building a master-key agent', async () => {
    for (const sessionToken of UNUSABLE_IDENTITIES) {
      const attempt = factory.createValidated({ sessionToken: sessionToken as string });
      await expect(attempt).rejects.toBeInstanceOf(AgentUnauthorizedError);
      await expect(attempt).rejects.toMatchObject({ reason: 'blank_identity' });
    }
    // validateSession: true through the endpoint's path lands in the same place.
    await expect(
      agentFromFactoryResult({ sessionToken: '  ', validateSession: true }, factory),
    ).rejects.toMatchObject({ reason: 'blank_identity' });
  });

  it('create refuses every blank identity property the same way', () => {
    for (const property of ['sessionToken', 'aclUser', 'aclRole', 'tenantId']) {
      for (const value of UNUSABLE_IDENTITIES) {
        expect(() => factory.create({ [property]: value })).toThrow(AgentUnauthorizedError);
      }
    }
  });

  it('an agentFactory returning a trimmed blank header gets a refusal, not an agent', async () => {
    const agentFactory = (header: string) => ({ sessionToken: header.trim() });
    for (const header of ['', '   ', '\t']) {
      await expect(agentFromFactoryResult(agentFactory(header), factory)).rejects.toBeInstanceOf(
        AgentUnauthorizedError,
      );
    }
  });

  it('refuses an agentFactory result that is not options, instead of reading it as "no options"', async () => {
    for (const produced of [undefined, null, 'r:token', 42, ['r:token']]) {
      await expect(agentFromFactoryResult(produced, factory)).rejects.toBeInstanceOf(
        ParseAgentConfigError,
      );
    }
    // Options with no identity at all are still the master key, as documented.
    const operator = await agentFromFactoryResult({}, factory);
    expect(operator).toBeInstanceOf(ParseAgent);
    expect(operator.authType).toBe('master_key');
  });
});
