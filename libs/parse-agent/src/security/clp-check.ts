import type { DataPrincipals } from '../ports/data-path';

/** Parse CLP operations an agent method's tier maps to (readonly reads, write updates, admin deletes). */
export type ClpOperation = 'find' | 'get' | 'count' | 'create' | 'update' | 'delete' | 'addField';

/**
 * Whether a class-level permission entry grants the operation to these principals. Parse's rules:
 * no entry means public; `*` is everyone; `requiresAuthentication` is any signed-in user; user ids
 * and `role:Name` name principals; `pointerFields` defers to each row (Parse checks it per row,
 * so the class gate lets it through). The master key bypasses CLP.
 */
export function clpGrants(
  clp: Record<string, unknown> | undefined,
  operation: ClpOperation,
  who: DataPrincipals,
): boolean {
  if (who.master) return true;
  const entry = clp?.[operation];
  if (entry === undefined || entry === null) return true;
  if (typeof entry !== 'object') return entry === true;
  const grants = entry as Record<string, unknown>;
  if (grants['*'] === true) return true;
  const signedIn = who.principals.some((p) => p !== '*');
  if (grants.requiresAuthentication === true && signedIn) return true;
  if (Array.isArray(grants.pointerFields) && grants.pointerFields.length && signedIn) return true;
  return who.principals.some((p) => p !== '*' && grants[p] === true);
}
