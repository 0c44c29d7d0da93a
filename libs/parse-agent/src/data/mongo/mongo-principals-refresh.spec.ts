import { Query } from 'mingo';
import type { AgentIdentity } from '../../core/agent-identity';
import { buildParseMongoFixture } from '../../../../../test/fixtures/parse-mongo-fixture';
import { createMongoDataPathProvider } from './create-mongo-data-path';
import type { MongoDatabaseLike, MongoDoc } from './mongo-driver';

/**
 * principals() and refreshPrincipals() on the direct MongoDB path, over Parse-on-MongoDB storage
 * documents answered by mingo (no MongoDB server here): role expansions are cached, and a refresh
 * picks up a membership added at run time.
 */
function database(collections: Record<string, MongoDoc[]>): MongoDatabaseLike {
  return {
    collection: (name) => ({
      aggregate: () => {
        throw new Error('not used');
      },
      find: (filter, options) => ({
        toArray: async () =>
          new Query(filter).find(collections[name] ?? [], options?.projection).all() as MongoDoc[],
        close: async () => undefined,
      }),
    }),
  };
}

const identity = (partial: Partial<AgentIdentity>): AgentIdentity => ({
  agentId: 'a1',
  permissions: 'readonly',
  authType: partial.aclRole ? 'acl_role' : partial.aclUser ? 'acl_user' : 'master_key',
  usingMasterKey: !partial.aclRole && !partial.aclUser,
  ...partial,
});

describe('MongoDataPath principals', () => {
  const collections = buildParseMongoFixture(12).collections as Record<string, MongoDoc[]>;
  const provider = createMongoDataPathProvider(
    { uri: 'mongodb://unused' },
    { request: async () => ({}) as never },
    async () => database(collections),
  );

  it('names the user with its roles (inherited ones too), a role with what it inherits, and the master key', async () => {
    // staff's `roles` relation holds manager: carol (a manager) inherits staff, alice does not get manager.
    expect(await provider.bind(identity({ aclUser: 'u_carol' })).principals()).toEqual({
      master: false,
      principals: ['*', 'u_carol', 'role:manager', 'role:staff'],
    });
    expect(await provider.bind(identity({ aclUser: 'u_alice' })).principals()).toEqual({
      master: false,
      principals: ['*', 'u_alice', 'role:staff'],
    });
    expect(await provider.bind(identity({ aclRole: 'manager' })).principals()).toEqual({
      master: false,
      principals: ['*', 'role:manager', 'role:staff'],
    });
    expect(await provider.bind(identity({})).principals()).toEqual({ master: true });
  });

  it('keeps a role expansion cached until refreshPrincipals()', async () => {
    const bob = identity({ aclUser: 'u_bob' });
    expect((await provider.bind(bob).principals()).master).toBe(false);
    const before = await provider.bind(bob).principals();
    expect(before).toEqual({ master: false, principals: ['*', 'u_bob'] });
    collections['_Join:users:_Role'].push({
      _id: 'j9',
      owningId: 'r_manager',
      relatedId: 'u_bob',
    });
    // A new path for the same identity still gets the cached expansion.
    const path = provider.bind(bob);
    expect(await path.principals()).toEqual(before);
    await path.refreshPrincipals();
    expect(await path.principals()).toEqual({
      master: false,
      principals: ['*', 'u_bob', 'role:manager', 'role:staff'],
    });
  });
});
