import { parseRest, type RestAuth } from './parse-rest';

export type Acl = Record<string, { read?: boolean; write?: boolean }>;

export interface SeededUser {
  objectId: string;
  username: string;
  password: string;
  sessionToken: string;
}

const master: RestAuth = { masterKey: true };

/** Signs a user up (password hashed by Parse) and returns its session token. */
export async function createUser(
  username: string,
  password = 'test-password',
  fields: Record<string, unknown> = {},
): Promise<SeededUser> {
  const res = await parseRest<{ objectId: string; sessionToken: string }>('POST', '/users', {
    username,
    password,
    ...fields,
  });
  return { objectId: res.objectId, username, password, sessionToken: res.sessionToken };
}

/** Logs an existing user in and returns a fresh session token. */
export async function logIn(username: string, password: string): Promise<string> {
  const res = await parseRest<{ sessionToken: string }>('POST', '/login', { username, password });
  return res.sessionToken;
}

export const pointer = (className: string, objectId: string) => ({
  __type: 'Pointer',
  className,
  objectId,
});

/**
 * Creates a role. `users` become members; `inheritedBy` lists role names whose members inherit this
 * role's permissions (Parse's `roles` relation: child roles).
 */
export async function createRole(
  name: string,
  opts: { users?: string[]; inheritedBy?: string[]; acl?: Acl } = {},
): Promise<string> {
  const body: Record<string, unknown> = { name, ACL: opts.acl ?? { '*': { read: true } } };
  if (opts.users?.length) {
    body.users = { __op: 'AddRelation', objects: opts.users.map((id) => pointer('_User', id)) };
  }
  if (opts.inheritedBy?.length) {
    const roles = await parseRest<{ results: Array<{ objectId: string }> }>(
      'GET',
      `/roles?where=${encodeURIComponent(JSON.stringify({ name: { $in: opts.inheritedBy } }))}`,
      undefined,
      master,
    );
    body.roles = {
      __op: 'AddRelation',
      objects: roles.results.map((r) => pointer('_Role', r.objectId)),
    };
  }
  const res = await parseRest<{ objectId: string }>('POST', '/roles', body, master);
  return res.objectId;
}

/** Creates one row with the master key (ACL optional: none means public). */
export async function createObject(
  className: string,
  fields: Record<string, unknown>,
  acl?: Acl,
): Promise<string> {
  const body = acl ? { ...fields, ACL: acl } : fields;
  const res = await parseRest<{ objectId: string }>('POST', `/classes/${className}`, body, master);
  return res.objectId;
}

/** Creates many rows through /batch (50 per request). */
export async function createObjects(
  className: string,
  rows: Array<Record<string, unknown>>,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += 50) {
    const requests = rows.slice(i, i + 50).map((body) => ({
      method: 'POST',
      path: `/parse/classes/${className}`,
      body,
    }));
    const res = await parseRest<Array<{ success?: { objectId: string }; error?: unknown }>>(
      'POST',
      '/batch',
      { requests },
      master,
    );
    for (const r of res) {
      if (!r.success) throw new Error(`batch create failed: ${JSON.stringify(r.error)}`);
      ids.push(r.success.objectId);
    }
  }
  return ids;
}

/**
 * Declares a class schema with fields and class-level permissions (including protectedFields).
 * Creates the class when missing, updates it otherwise.
 */
export async function defineClass(
  className: string,
  fields: Record<string, { type: string; targetClass?: string }>,
  classLevelPermissions?: Record<string, unknown>,
): Promise<void> {
  const body: Record<string, unknown> = { className, fields };
  if (classLevelPermissions) body.classLevelPermissions = classLevelPermissions;
  try {
    await parseRest('POST', `/schemas/${className}`, body, master);
  } catch {
    const existing = await parseRest<{ fields: Record<string, unknown> }>(
      'GET',
      `/schemas/${className}`,
      undefined,
      master,
    );
    const missing = Object.fromEntries(
      Object.entries(fields).filter(([name]) => !(name in existing.fields)),
    );
    await parseRest(
      'PUT',
      `/schemas/${className}`,
      { className, fields: missing, ...(classLevelPermissions ? { classLevelPermissions } : {}) },
      master,
    );
  }
}

const SYSTEM_CLASSES = new Set([
  '_User',
  '_Role',
  '_Session',
  '_Installation',
  '_Audience',
  '_Idempotency',
]);

/** Removes every row of every class and drops non-system classes: a clean slate between suites. */
export async function resetData(): Promise<void> {
  const schemas = await parseRest<{ results: Array<{ className: string }> }>(
    'GET',
    '/schemas',
    undefined,
    master,
  );
  for (const { className } of schemas.results) {
    await parseRest('DELETE', `/purge/${className}`, undefined, master).catch(() => undefined);
    if (!SYSTEM_CLASSES.has(className) && !className.startsWith('_')) {
      await parseRest('DELETE', `/schemas/${className}`, undefined, master).catch(() => undefined);
    }
  }
}
