import { isPlainObject } from '../core/plain-object';
/**
 * Parse's write rules, checked by the library for identities Parse Server cannot act as (aclUser,
 * aclRole agents write with the master key, which Parse exempts from every rule). Pure: the caller
 * reads the class-level permissions and the row, these functions decide.
 */

/** The row writes an ACL-scoped agent can make. */
export type RowWriteOperation = 'create' | 'update' | 'delete';

/**
 * What the class-level permission of an operation allows these principals: every row, only rows
 * whose pointer fields name the user (`pointerFields`, `writeUserFields`), or nothing (with why).
 */
export type ClpWriteDecision =
  | { allowed: true; pointerFields?: undefined }
  | { allowed: true; pointerFields: string[] }
  | { allowed: false; reason: string };

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && !!v) : [];

/** The user objectId among principals (`'*'` and `'role:...'` excepted), if there is one. */
export function principalUserId(principals: readonly string[]): string | undefined {
  const users = principals.filter((p) => p !== '*' && !p.startsWith('role:'));
  // Parse acts on pointer permissions only for exactly one user; anything else grants nothing.
  return users.length === 1 ? users[0] : undefined;
}

/**
 * Parse Server's class-level rule for a write, as it applies it to a signed-in request: no entry
 * means public; `*`, the user's id or one of its roles grants it; `requiresAuthentication` grants
 * it to anyone who is more than `*`; otherwise pointer permissions (`pointerFields` of the
 * operation, the class's `writeUserFields`) grant update and delete row by row to the user they
 * name, and never grant create. Anything else is refused.
 */
export function clpWriteDecision(
  clp: Record<string, unknown> | undefined,
  operation: RowWriteOperation,
  principals: readonly string[],
): ClpWriteDecision {
  const entry = clp?.[operation];
  if (entry === undefined || entry === null) return { allowed: true };
  if (!isPlainObject(entry)) {
    return entry === true
      ? { allowed: true }
      : { allowed: false, reason: `its '${operation}' permission is not an object of grants` };
  }
  if (entry['*'] === true) return { allowed: true };
  if (principals.some((p) => p !== '*' && entry[p] === true)) return { allowed: true };
  const signedIn = principals.some((p) => p !== '*');
  if (entry.requiresAuthentication === true && signedIn) return { allowed: true };
  const pointerFields = [
    ...new Set([...strings(entry.pointerFields), ...strings(clp?.writeUserFields)]),
  ];
  if (operation === 'create') {
    return {
      allowed: false,
      reason: pointerFields.length
        ? `'create' is granted only through pointer permissions, which never allow creating`
        : `'create' is granted to none of the agent's principals`,
    };
  }
  if (pointerFields.length) {
    if (!principalUserId(principals)) {
      return {
        allowed: false,
        reason: `'${operation}' is granted only to the user named in ${pointerFields.map((f) => `'${f}'`).join(', ')} of each row, and this agent acts for no user`,
      };
    }
    return { allowed: true, pointerFields };
  }
  return { allowed: false, reason: `'${operation}' is granted to none of the agent's principals` };
}

/** Whether one of the row's pointer fields (a pointer, or an array of pointers) names the user. */
export function pointerFieldsName(
  row: Record<string, unknown>,
  fields: readonly string[],
  userId: string,
): boolean {
  const names = (value: unknown): boolean => {
    if (Array.isArray(value)) return value.some(names);
    if (isPlainObject(value)) return value.objectId === userId;
    // The PostgreSQL adapter can hand back a bare objectId for a pointer column.
    return value === userId;
  };
  return fields.some((field) => names(row[field]));
}

/**
 * Parse's row ACL rule for a write: a row without an ACL is writable by everyone; otherwise one
 * of the principals (`*`, the user, a role) must hold `write: true`. A malformed ACL grants nothing.
 */
export function aclGrantsWrite(acl: unknown, principals: readonly string[]): boolean {
  if (acl === undefined || acl === null) return true;
  if (!isPlainObject(acl)) return false;
  return principals.some((p) => {
    const grant = acl[p];
    return isPlainObject(grant) && grant.write === true;
  });
}
