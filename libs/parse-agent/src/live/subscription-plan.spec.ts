import { AgentValidationError } from '../core/errors';
import type { ParseAgent } from '../agent/parse-agent';
import { liveQueryCredentials } from './subscription-plan';

const agent = (fields: Partial<ParseAgent>) => fields as ParseAgent;

describe('liveQueryCredentials', () => {
  it('gives a session-token agent its own token, a master-key agent the master key', () => {
    expect(
      liveQueryCredentials(agent({ authType: 'session_token', sessionToken: 'r:abc' })),
    ).toEqual({ sessionToken: 'r:abc' });
    expect(liveQueryCredentials(agent({ authType: 'master_key' }))).toEqual({ masterKey: true });
  });

  it.each([
    ['acl_user', 'aclUser'],
    ['acl_role', 'aclRole'],
  ] as const)('refuses a %s agent and says why', (authType, name) => {
    const refuse = () => liveQueryCredentials(agent({ authType, aclUser: 'u1', aclRole: 'r1' }));
    expect(refuse).toThrow(AgentValidationError);
    expect(refuse).toThrow(
      new RegExp(`refused for ${name} agents: Parse LiveQuery authenticates only`),
    );
  });

  it('refuses a session agent without a token rather than falling back to the master key', () => {
    expect(() => liveQueryCredentials(agent({ authType: 'session_token' }))).toThrow(
      AgentValidationError,
    );
  });
});
