import { AccessDeniedError } from '../../core/errors';
import type { MongoDoc } from './mongo-driver';
import type { ClassPermissions } from './mongo-schema';
import type { Principals } from './mongo-principals';

/** The CLP operation a read checks. Every analytics operation reads rows, so it checks `find`. */
export type ClpOperation = 'find' | 'get' | 'count';

/**
 * Checks a class-level permission for a scoped identity the way Parse Server does: allowed for `*`,
 * for a matching user id or `role:` name, for any signed-in user under `requiresAuthentication`, or
 * only on the rows whose `pointerFields` / `readUserFields` point at the user (returned as a storage
 * `$match` the caller must inject). Throws a `clp_denied` refusal otherwise.
 */
export function clpRowMatch(
  className: string,
  clp: ClassPermissions | undefined,
  operation: ClpOperation,
  principals: Principals,
): MongoDoc | undefined {
  const perms = clp?.[operation] as Record<string, unknown> | undefined;
  if (!clp || !perms) return undefined;
  if (principals.names.some((name) => perms[name] === true)) return undefined;
  if (perms.requiresAuthentication === true && principals.userId) return undefined;
  const pointerFields = [
    ...(Array.isArray(perms.pointerFields) ? perms.pointerFields : []),
    ...(Array.isArray(clp.readUserFields) ? clp.readUserFields : []),
  ].filter((f): f is string => typeof f === 'string');
  if (pointerFields.length && principals.userId) {
    const userId = principals.userId;
    return {
      $or: pointerFields.flatMap((field) => [
        { [`_p_${field}`]: `_User$${userId}` },
        // An array of user pointers is stored as embedded pointer objects.
        { [field]: { $elemMatch: { __type: 'Pointer', className: '_User', objectId: userId } } },
      ]),
    };
  }
  throw new AccessDeniedError(
    `Class-level permissions of '${className}' do not let this agent ${operation} it. Ask the app owner to grant the role or user in the class's CLP, or use an agent that holds it.`,
    { kind: 'clp_denied' },
  );
}

/**
 * The protectedFields hidden from these principals: the intersection of every applicable entry
 * (`*`, the user id, its roles, `authenticated` for a signed-in user), as Parse Server computes it.
 * `userField:` entries depend on each row and are not applied, which can only hide more, never less.
 */
export function protectedFieldsFor(
  clp: ClassPermissions | undefined,
  principals: Principals,
): Set<string> {
  const table = clp?.protectedFields as Record<string, unknown> | undefined;
  if (!table) return new Set();
  const keys = new Set(principals.names);
  if (principals.userId) keys.add('authenticated');
  let hidden: Set<string> | undefined;
  for (const [key, list] of Object.entries(table)) {
    if (!keys.has(key) || !Array.isArray(list)) continue;
    const set = new Set(list.filter((f): f is string => typeof f === 'string'));
    hidden = hidden ? new Set([...hidden].filter((f) => set.has(f))) : set;
  }
  return hidden ?? new Set();
}
