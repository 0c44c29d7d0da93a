import type { AgentIdentity } from '../core/agent-identity';
import { AccessDeniedError, ParseAgentConfigError, ParseRequestError } from '../core/errors';
import type { ParseSchema } from '../core/parse-schema';
import type { DataPath, DataPrincipals, DataRow } from '../ports/data-path';
import { AclScopedWritePath, AclScopedWriteProvider } from './acl-scoped-write-path';

/**
 * The fail-closed edges of the ACL-scoped write path, with hand-made paths: a schema or row read
 * that fails, a read path that cannot name the agent's principals. The real Parse Server cannot be
 * made to fail these reads on demand; test/agent/acl-scoped-writes.spec.ts covers the rest live.
 */
const role: AgentIdentity = {
  agentId: 'a1',
  permissions: 'admin',
  authType: 'acl_role',
  usingMasterKey: false,
  aclRole: 'writer',
};

interface Recorder {
  writes: string[];
}

function paths(
  options: {
    principals?: DataPrincipals | null;
    row?: DataRow | Error;
  } = {},
): { reads: DataPath; writes: DataPath; rec: Recorder } {
  const rec: Recorder = { writes: [] };
  const reads: DataPath = {
    kind: 'scoped-reads',
    find: async () => [],
    get: async () => undefined,
    count: async () => 0,
    ...(options.principals === null
      ? {}
      : {
          principals: async () =>
            options.principals ?? { master: false, principals: ['*', 'role:writer'] },
        }),
  };
  const writes: DataPath = {
    kind: 'master-writes',
    find: async () => [],
    get: async () => {
      if (options.row instanceof Error) throw options.row;
      return options.row;
    },
    count: async () => 0,
    create: async (className) => {
      rec.writes.push(`create ${className}`);
      return { objectId: 'new1' };
    },
    update: async (className, id) => {
      rec.writes.push(`update ${className}#${id}`);
      return {};
    },
    delete: async (className, id) => {
      rec.writes.push(`delete ${className}#${id}`);
    },
  };
  return { reads, writes, rec };
}

const schemaWith = (clp?: Record<string, unknown>) => async (): Promise<ParseSchema> => ({
  className: 'Note',
  fields: {},
  classLevelPermissions: clp,
});

describe('AclScopedWritePath (fail closed)', () => {
  it('writes nothing when the class schema cannot be read, and says so', async () => {
    const { reads, writes, rec } = paths();
    const path = new AclScopedWritePath(role, {
      reads,
      writes,
      schema: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    });
    const error = await path.create('Note', { title: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParseRequestError);
    expect((error as Error).message).toContain('could not be read');
    expect((error as Error).message).toContain('ECONNREFUSED');
    expect(rec.writes).toEqual([]);
  });

  it('writes nothing when the row (and its ACL) cannot be read', async () => {
    const { reads, writes, rec } = paths({ row: new Error('socket hang up') });
    const path = new AclScopedWritePath(role, { reads, writes, schema: schemaWith() });
    await expect(path.update('Note', 'abc', { title: 'x' })).rejects.toThrow(/could not be read/);
    await expect(path.delete('Note', 'abc')).rejects.toThrow(/could not be read/);
    expect(rec.writes).toEqual([]);
  });

  it('answers not found for a row the master key does not find', async () => {
    const { reads, writes, rec } = paths({ row: undefined });
    const path = new AclScopedWritePath(role, { reads, writes, schema: schemaWith() });
    await expect(path.update('Note', 'abc', { title: 'x' })).rejects.toThrow(/Object not found/);
    expect(rec.writes).toEqual([]);
  });

  it('refuses when the read path cannot name the principals, or claims the master key', async () => {
    for (const principals of [null, { master: true } as const]) {
      const { reads, writes, rec } = paths({ principals });
      const path = new AclScopedWritePath(role, { reads, writes, schema: schemaWith() });
      await expect(path.create('Note', {})).rejects.toBeInstanceOf(ParseAgentConfigError);
      expect(rec.writes).toEqual([]);
    }
  });

  it('refuses a missing class, and never changes the schema', async () => {
    const { reads, writes, rec } = paths();
    const path = new AclScopedWritePath(role, { reads, writes, schema: async () => undefined });
    await expect(path.create('Nope', {})).rejects.toThrow(/does not exist/);
    await expect(path.createClass('Nope', { fields: {} })).rejects.toBeInstanceOf(
      AccessDeniedError,
    );
    await expect(path.deleteClass('Note')).rejects.toThrow(/master-key agent/);
    expect(rec.writes).toEqual([]);
  });

  it('checks the CLP before it reads the row, and the ACL before it writes', async () => {
    const { reads, writes, rec } = paths({
      row: { objectId: 'abc', ACL: { '*': { read: true } } },
    });
    const denyAll = new AclScopedWritePath(role, {
      reads,
      writes,
      schema: schemaWith({ update: {} }),
    });
    const clp = await denyAll.update('Note', 'abc', {}).catch((e: AccessDeniedError) => e);
    expect(clp).toMatchObject({ kind: 'clp_denied' });
    const open = new AclScopedWritePath(role, { reads, writes, schema: schemaWith() });
    const acl = await open.update('Note', 'abc', {}).catch((e: AccessDeniedError) => e);
    expect(acl).toMatchObject({ kind: 'acl_denied' });
    expect((acl as Error).message).toContain("aclRole 'writer' acts as role:writer");
    expect(rec.writes).toEqual([]);
  });

  it('writes once the CLP and the ACL allow it', async () => {
    const { reads, writes, rec } = paths({
      row: { objectId: 'abc', ACL: { 'role:writer': { write: true } } },
    });
    const path = new AclScopedWritePath(role, { reads, writes, schema: schemaWith() });
    await path.update('Note', 'abc', { title: 'y' });
    await path.delete('Note', 'abc');
    expect(await path.create('Note', { title: 'z' })).toEqual({ objectId: 'new1' });
    expect(rec.writes).toEqual(['update Note#abc', 'delete Note#abc', 'create Note']);
  });
});

describe('AclScopedWriteProvider', () => {
  const { reads, writes } = paths();
  const provider = (servesReads: boolean) =>
    new AclScopedWriteProvider({
      writer: { kind: 'parse-rest', refusal: () => undefined, bind: () => writes },
      reads: { pathFor: () => reads, serves: () => servesReads },
      schema: schemaWith(),
    });

  it('serves only writes, only for aclUser/aclRole agents whose reads are served', () => {
    expect(provider(true).refusal('write', role)).toBeUndefined();
    expect(provider(true).refusal('find', role)).toBeDefined();
    const session = { ...role, authType: 'session_token' as const, sessionToken: 'r:x' };
    expect(provider(true).refusal('write', session)).toBeDefined();
    expect(provider(false).refusal('write', role)).toContain('reads');
  });

  it('binds a path that reads through the scoped reads', () => {
    const path = provider(true).bind(role);
    expect(path.kind).toBe('acl-scoped-write');
    expect(() => provider(true).bind({ ...role, authType: 'master_key' })).toThrow(
      ParseAgentConfigError,
    );
  });
});
