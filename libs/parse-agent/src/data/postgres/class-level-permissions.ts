import { AccessDeniedError } from '../../core/errors';
import type { DataOperation } from '../../ports/data-path';
import type { PgClassSchema } from './pg-schema';
import type { Where } from './where-to-sql';

/** A class's `classLevelPermissions` as `_SCHEMA` stores them. */
export type ClassLevelPermissions = Record<string, unknown>;

/** Who reads, as Parse Server's permission checks see them. */
export interface PgReader {
  /** 'master' bypasses row ACL, CLP and protectedFields (as Parse's master key does). */
  master: boolean;
  /** The signed-in (or ACL-scoped) user's objectId; undefined for a role scope or anonymous. */
  userId?: string;
  /** `'role:Name'` principals, inheritance already expanded. */
  roles: readonly string[];
}

/** The ACL group Parse checks CLP and `_rperm` against: `'*'`, the user id, the roles. */
export function aclGroup(reader: PgReader): string[] {
  return ['*', ...(reader.userId ? [reader.userId] : []), ...reader.roles];
}

export type ClpOperation = 'find' | 'get' | 'count';

/** Analytics read rows the way a find does; Parse has no separate CLP entry for them. */
export function clpOperationFor(operation: DataOperation): ClpOperation {
  if (operation === 'get' || operation === 'count') return operation;
  return 'find';
}

/** What the CLP check allows: all rows, only rows whose pointer fields name the user, or none. */
export type ClpDecision =
  { rows: 'all' } | { rows: 'pointer'; where: Where } | { rows: 'none'; reason: string };

function entry(clp: ClassLevelPermissions | undefined, key: string): Record<string, unknown> {
  const value = clp?.[key];
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/** Parse's testPermissions: no entry (or public) allows; else one of the reader's principals must. */
function testPermissions(
  clp: ClassLevelPermissions | undefined,
  group: readonly string[],
  op: ClpOperation,
): boolean {
  if (!clp || clp[op] === undefined || clp[op] === null) return true;
  const perms = entry(clp, op);
  if (perms['*'] === true) return true;
  return group.some((p) => perms[p] === true);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Parse Server's class-level check for a read, in its order: the operation's entry first
 * (public, the user, a role), then `requiresAuthentication`, then pointer permissions
 * (`pointerFields` of the operation and `readUserFields`), which narrow the rows to those naming
 * the user. Throws AccessDeniedError (kind clp_denied) where Parse answers "Permission denied".
 */
export function checkClassPermission(
  className: string,
  clp: ClassLevelPermissions | undefined,
  schema: PgClassSchema,
  reader: PgReader,
  op: ClpOperation,
): ClpDecision {
  if (reader.master) return { rows: 'all' };
  const group = aclGroup(reader);
  if (testPermissions(clp, group, op)) return { rows: 'all' };
  const perms = entry(clp, op);
  const authenticated = !!reader.userId || reader.roles.length > 0;
  if (perms.requiresAuthentication === true) {
    if (!authenticated) {
      throw new AccessDeniedError(
        `Permission denied: ${op} on ${className} needs a signed-in user (class-level permissions).`,
        { kind: 'clp_denied' },
      );
    }
    return { rows: 'all' };
  }
  const fields = [...stringList(perms.pointerFields)];
  for (const f of stringList(clp?.readUserFields)) if (!fields.includes(f)) fields.push(f);
  if (fields.length === 0) {
    throw new AccessDeniedError(
      `Permission denied: this identity may not ${op} ${className} (class-level permissions).`,
      { kind: 'clp_denied' },
    );
  }
  // Pointer permissions need exactly one user; Parse then returns no rows rather than an error.
  if (!reader.userId) {
    return { rows: 'none', reason: `${className} is readable only through user pointer fields` };
  }
  const user = { __type: 'Pointer', className: '_User', objectId: reader.userId };
  const clauses: Where[] = [];
  for (const name of fields) {
    const type = schema.fields[name]?.type;
    if (type === 'Pointer') clauses.push({ [name]: user });
    else if (type === 'Array') clauses.push({ [name]: { $all: [user] } });
    // Parse refuses a CLP naming a field of another type; matching nothing is the safe reading.
  }
  if (clauses.length === 0) return { rows: 'none', reason: 'no usable pointer permission field' };
  return { rows: 'pointer', where: clauses.length === 1 ? clauses[0] : { $or: clauses } };
}

/**
 * The fields Parse hides from this reader: the intersection of every protectedFields entry that
 * applies (`'*'`, `'authenticated'` for a signed-in user, each of the reader's roles, the user id).
 * `userField:<pointer>` entries only ever relax protection per row; they are ignored here, so a
 * field stays hidden when in doubt.
 */
export function protectedFieldsFor(
  protectedFields: Record<string, unknown> | undefined,
  reader: PgReader,
): string[] {
  if (reader.master || !protectedFields) return [];
  const sets: string[][] = [];
  const own = (key: string) => Object.prototype.hasOwnProperty.call(protectedFields, key);
  if (own('*')) sets.push(stringList(protectedFields['*']));
  if (reader.userId || reader.roles.length > 0) {
    if (own('authenticated')) sets.push(stringList(protectedFields.authenticated));
    for (const role of reader.roles) if (own(role)) sets.push(stringList(protectedFields[role]));
    if (reader.userId && own(reader.userId)) sets.push(stringList(protectedFields[reader.userId]));
  }
  if (sets.length === 0) return [];
  let result = [...new Set(sets.flat())];
  for (const set of sets) result = result.filter((f) => set.includes(f));
  return result;
}

/**
 * Parse Server's `protectedFields` server option merged into a class's CLP, as Parse does when it
 * loads schemas: per key, the union of both lists.
 */
export function mergeProtectedFields(
  fromSchema: Record<string, unknown> | undefined,
  fromServer: Record<string, readonly string[]> | undefined,
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(fromSchema ?? {})) out[key] = stringList(value);
  for (const [key, value] of Object.entries(fromServer ?? {})) {
    out[key] = [...new Set([...(out[key] ?? []), ...value])];
  }
  return out;
}
