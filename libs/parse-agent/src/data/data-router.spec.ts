import type { AgentIdentity, AuthType } from '../core/agent-identity';
import {
  directDatabaseRank,
  PARSE_SERVER_FIRST,
  type DataOperation,
  type DataPath,
  type DataPathProvider,
} from '../ports/data-path';
import { ParseRestDataPathProvider } from './parse-rest/parse-rest-data-path';
import type { ParseRestClient } from './parse-rest/parse-rest-client';
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
  rank?: (op: DataOperation) => number,
): DataPathProvider & { bound: AgentIdentity[] } {
  const bound: AgentIdentity[] = [];
  return {
    kind,
    bound,
    ...(rank ? { rank } : {}),
    refusal: (op, who) => (serves(op, who) ? undefined : `${kind} cannot`),
    bind: (who) => {
      bound.push(who);
      return { kind } as DataPath;
    },
  };
}

const restLike = provider(
  'rest-like',
  (op, who) => ['find', 'get', 'count'].includes(op) && !who.aclUser && !who.aclRole,
  (op) => (PARSE_SERVER_FIRST.has(op) ? 1 : 0),
);
const direct = provider('postgres', () => true);

describe('DataRouter', () => {
  it('prefers Parse REST for row reads and the direct path for analytics', () => {
    const router = new DataRouter([direct, restLike]);
    expect(router.pathFor('find', identity('session_token')).kind).toBe('rest-like');
    expect(router.pathFor('group_by', identity('session_token')).kind).toBe('postgres');
    expect(router.pathFor('find', identity('acl_user')).kind).toBe('postgres');
  });

  it('ranks by what each provider declares, not by its kind', () => {
    // Named 'parse-rest' but declaring no rank: it ranks like a direct database path.
    const namedRest = provider('parse-rest', () => true);
    const rowsFirst = provider(
      'rows-first',
      () => true,
      (op) => (op === 'find' ? 5 : 0),
    );
    const router = new DataRouter([namedRest, rowsFirst]);
    expect(router.pathFor('find', identity('master_key')).kind).toBe('rows-first');
    expect(router.pathFor('aggregate', identity('master_key')).kind).toBe('parse-rest');
    // On a tie the earlier provider wins.
    const second = provider('second', () => true);
    expect(new DataRouter([namedRest, second]).pathFor('count', identity('master_key')).kind).toBe(
      'parse-rest',
    );
  });

  it("ranks the library's Parse REST provider first for row reads and writes, last for analytics", () => {
    const rest = new ParseRestDataPathProvider({} as ParseRestClient, 'mongo');
    for (const op of ['find', 'get', 'count', 'write'] as const)
      expect(rest.rank(op)).toBeGreaterThan(directDatabaseRank(op));
    for (const op of ['aggregate', 'group_by', 'group_by_date', 'distinct', 'explain'] as const)
      expect(rest.rank(op)).toBeLessThan(directDatabaseRank(op));
    const router = new DataRouter([rest, direct]);
    expect(router.pathFor('distinct', identity('master_key')).kind).toBe('postgres');
    expect(router.pathFor('find', identity('master_key')).kind).toBe('parse-rest');
    expect(router.pathFor('write', identity('master_key')).kind).toBe('parse-rest');
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
