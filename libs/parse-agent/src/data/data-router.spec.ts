import type { AgentIdentity, AuthType } from '../core/agent-identity';
import type { DataOperation, DataPath, DataPathProvider } from '../ports/data-path';
import { DataPathUnavailableError, DataRouter } from './data-router';

const identity = (authType: AuthType): AgentIdentity => ({
  agentId: 'a',
  permissions: 'readonly',
  authType,
  usingMasterKey: authType === 'master_key',
  sessionToken: authType === 'session_token' ? 'r:token' : undefined,
  aclUser: authType === 'acl_user' ? 'u1' : undefined,
  aclRole: authType === 'acl_role' ? 'staff' : undefined,
});

function provider(
  kind: string,
  serves: (op: DataOperation, who: AgentIdentity) => boolean,
): DataPathProvider & { bound: AgentIdentity[] } {
  const bound: AgentIdentity[] = [];
  return {
    kind,
    bound,
    refusal: (op, who) => (serves(op, who) ? undefined : `${kind} cannot`),
    bind: (who) => {
      bound.push(who);
      return { kind } as DataPath;
    },
  };
}

const restLike = provider(
  'parse-rest',
  (op, who) => ['find', 'get', 'count'].includes(op) && !who.aclUser && !who.aclRole,
);
const direct = provider('postgres', () => true);

describe('DataRouter', () => {
  it('prefers Parse REST for row reads and the direct path for analytics', () => {
    const router = new DataRouter([direct, restLike]);
    expect(router.pathFor('find', identity('session_token')).kind).toBe('parse-rest');
    expect(router.pathFor('group_by', identity('session_token')).kind).toBe('postgres');
    expect(router.pathFor('find', identity('acl_user')).kind).toBe('postgres');
  });

  it('binds the chosen path to the identity it was asked for', () => {
    const router = new DataRouter([restLike]);
    const who = identity('session_token');
    router.pathFor('count', who);
    expect(restLike.bound.at(-1)).toBe(who);
  });

  it('fails closed with a message naming what to configure, never an unscoped path', () => {
    const router = new DataRouter([restLike]);
    expect(() => router.pathFor('aggregate', identity('session_token'))).toThrow(
      DataPathUnavailableError,
    );
    expect(() => router.pathFor('find', identity('acl_role'))).toThrow(
      /Configure a direct database path/,
    );
    expect(router.serves('find', identity('acl_role'))).toBe(false);
    expect(router.serves('find', identity('master_key'))).toBe(true);
  });

  it('needs at least one provider', () => {
    expect(() => new DataRouter([])).toThrow(/at least one/);
  });
});
