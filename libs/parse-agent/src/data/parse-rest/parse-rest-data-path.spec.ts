import { UNUSABLE_IDENTITIES } from '../../../../../test/fixtures/blank-identities';
import type { AgentIdentity, AuthType } from '../../core/agent-identity';
import { AgentUnauthorizedError } from '../../core/errors';
import type { ParseRestClient } from './parse-rest-client';
import { ParseRestDataPathProvider } from './parse-rest-data-path';

const who = (authType: AuthType): AgentIdentity => ({
  agentId: 'a',
  permissions: 'readonly',
  authType,
  usingMasterKey: authType === 'master_key',
  sessionToken: authType === 'session_token' ? 'r:t' : undefined,
});

const client = {} as ParseRestClient;

describe('Parse REST routing of analytics', () => {
  it('never serves a pipeline to a PostgreSQL-backed (or undeclared) Parse, even for the master key', () => {
    for (const database of ['postgres', undefined] as const) {
      const rest = new ParseRestDataPathProvider(client, database);
      for (const op of ['aggregate', 'group_by', 'group_by_date'] as const) {
        expect(rest.refusal(op, who('master_key'))).toBeDefined();
      }
      expect(rest.bind(who('master_key')).aggregate).toBeUndefined();
    }
    expect(
      new ParseRestDataPathProvider(client, 'postgres').refusal('group_by', who('master_key')),
    ).toMatch(/PostgreSQL mistranslates/);
  });

  it('serves /aggregate to the master key only when Parse is declared MongoDB', () => {
    const rest = new ParseRestDataPathProvider(client, 'mongo');
    expect(rest.refusal('aggregate', who('master_key'))).toBeUndefined();
    expect(rest.bind(who('master_key')).aggregate).toBeDefined();
    // REST /aggregate ignores ACL: a session agent is never bound to it.
    expect(rest.refusal('aggregate', who('session_token'))).toMatch(/only to master-key agents/);
    expect(rest.bind(who('session_token')).aggregate).toBeUndefined();
    expect(rest.bind(who('session_token')).distinct).toBeUndefined();
  });

  it('serves distinct to the master key on either backend, and explain nowhere', () => {
    for (const database of ['mongo', 'postgres', undefined] as const) {
      const rest = new ParseRestDataPathProvider(client, database);
      expect(rest.refusal('distinct', who('master_key'))).toBeUndefined();
      expect(rest.refusal('distinct', who('session_token'))).toBeDefined();
      expect(rest.refusal('explain', who('master_key'))).toBeDefined();
      expect(rest.refusal('aggregate', who('acl_user'))).toMatch(/aclUser\/aclRole/);
    }
  });
});

describe('Parse REST binding of an identity', () => {
  const rest = new ParseRestDataPathProvider(client);

  it('refuses a session identity whose token is blank or missing, rather than send the master key', () => {
    for (const sessionToken of UNUSABLE_IDENTITIES) {
      expect(() =>
        rest.bind({ ...who('session_token'), sessionToken: sessionToken as string }),
      ).toThrow(AgentUnauthorizedError);
    }
    expect(() => rest.bind({ ...who('session_token'), sessionToken: undefined })).toThrow(
      /session_token identity without a session token/,
    );
  });

  it('uses the master key only for an identity that says it is a master-key agent', () => {
    expect(() => rest.bind(who('master_key'))).not.toThrow();
    expect(() => rest.bind(who('session_token'))).not.toThrow();
  });
});
