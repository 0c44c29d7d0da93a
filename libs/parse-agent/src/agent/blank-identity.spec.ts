import {
  blankStrings,
  NOT_STRINGS,
  UNUSABLE_IDENTITIES,
} from '../../../../test/fixtures/blank-identities';
import {
  createAgentServices,
  type StandaloneAgentServices,
} from '../composition/create-agent-services';
import { AgentUnauthorizedError } from '../core/errors';
import { suppressSecurityBanners } from '../core/security-banner';
import type { DataPathProvider } from '../ports/data-path';
import { ParseAgent, type AgentOptions } from './parse-agent';

/** Lets aclUser / aclRole agents be built (they need a direct path); never binds. */
const directPathStandIn: DataPathProvider = {
  kind: 'direct-stand-in',
  refusal: () => undefined,
  bind: () => {
    throw new Error('construction must not bind a data path');
  },
};

const IDENTITY_PROPERTIES = ['sessionToken', 'aclUser', 'aclRole', 'tenantId'] as const;

/**
 * Issue 31, item 1: an identity property that is present but empty, blank or not a string is
 * refused when the agent is built, for root agents and sub-agents alike. Only an agent given no
 * identity at all is a master-key agent.
 */
describe('agents refuse blank identities', () => {
  let standalone: StandaloneAgentServices;
  const agent = (options: AgentOptions) => new ParseAgent(options, standalone.services);

  const refusal = (work: () => unknown): AgentUnauthorizedError => {
    try {
      work();
    } catch (error) {
      if (error instanceof AgentUnauthorizedError) return error;
      throw error;
    }
    throw new Error('expected AgentUnauthorizedError, but an agent was built');
  };

  beforeAll(() => {
    suppressSecurityBanners();
    standalone = createAgentServices({
      parse: { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'unused' },
      dataPaths: [directPathStandIn],
    });
  });
  afterAll(() => standalone.close());

  it('builds no agent from an empty session token (the master key it used to become)', () => {
    const error = refusal(() => agent({ sessionToken: '' }));
    expect(error.reason).toBe('blank_identity');
    expect(error.message).toMatch(/^sessionToken is an empty string/);
  });

  it('refuses every blank string in every identity property, naming the property', () => {
    for (const property of IDENTITY_PROPERTIES) {
      for (const blank of blankStrings(60, property.length)) {
        const error = refusal(() => agent({ [property]: blank } as AgentOptions));
        expect(error.message.startsWith(`${property} is `)).toBe(true);
      }
    }
  });

  it('refuses values that are not strings, aclUser objects without a usable objectId too', () => {
    for (const property of IDENTITY_PROPERTIES) {
      for (const value of NOT_STRINGS) {
        // An aclUser object is read for its objectId: {} names no user.
        const named = property === 'aclUser' && isObject(value) ? 'aclUser.objectId' : property;
        const error = refusal(() => agent({ [property]: value } as AgentOptions));
        expect(error.message.startsWith(`${named} is `)).toBe(true);
      }
    }
    for (const objectId of UNUSABLE_IDENTITIES) {
      expect(refusal(() => agent({ aclUser: { objectId } as never })).message).toMatch(
        /^aclUser\.objectId is /,
      );
    }
  });

  it('refuses a blank identity next to a usable one instead of ignoring it', () => {
    // Before, '' was dropped and the other identity won: the caller's mistake went unnoticed.
    expect(() => agent({ sessionToken: 'r:alice', aclRole: ' ' })).toThrow(AgentUnauthorizedError);
    expect(() => agent({ sessionToken: 'r:alice', tenantId: '' })).toThrow(/^tenantId is/);
  });

  it('refuses a sub-agent given a blank identity, whatever its parent is', () => {
    const parents = [agent({}), agent({ sessionToken: 'r:alice' }), agent({ aclRole: 'staff' })];
    for (const parent of parents) {
      for (const property of IDENTITY_PROPERTIES) {
        for (const value of UNUSABLE_IDENTITIES) {
          expect(() => parent.subAgent({ [property]: value } as AgentOptions)).toThrow(
            AgentUnauthorizedError,
          );
        }
      }
    }
  });

  it('keeps the master key for an agent given no identity, absent or undefined alike', () => {
    expect(agent({}).authType).toBe('master_key');
    expect(
      agent({
        sessionToken: undefined,
        aclUser: undefined,
        aclRole: undefined,
        tenantId: undefined,
      }).authType,
    ).toBe('master_key');
    expect(agent({ sessionToken: 'r:alice', tenantId: 'acme' })).toMatchObject({
      authType: 'session_token',
      tenantId: 'acme',
    });
  });
});

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
