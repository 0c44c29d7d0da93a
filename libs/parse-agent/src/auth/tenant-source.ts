import type { ParseRestClient } from '../data/parse-rest/parse-rest-client';

/**
 * Where a signed-in user's tenant comes from. Only sources clients cannot write qualify:
 *
 * - `fromRole`: direct membership in a tenant role, read with the master key. A pattern with one
 *   `{tenant}` placeholder (`'{tenant}-staff'`) or a function from a role name to its tenant
 *   (undefined for roles that name none). Inherited roles do not count: an admin role that
 *   inherits every tenant's role must not bind its members to one of them. A user in no tenant
 *   role, or directly in several, gets no tenant.
 * - `fromUserField`: a `_User` field clients cannot set or change (e.g. one a `beforeSave` trigger
 *   refuses to change without the master key, sign-up included), read with the master key. Parse
 *   lets every user edit their own `_User` row, so an unprotected field is whatever the user says.
 */
export type TenantSource =
  | { fromRole: string | ((roleName: string) => string | undefined); fromUserField?: undefined }
  | { fromUserField: string; fromRole?: undefined };

/** The tenant a user acts for, or why they act for none. */
export type TenantBinding = { tenantId: string } | { tenantId?: undefined; reason: string };

/** The placeholder of a `fromRole` pattern. */
export const TENANT_PLACEHOLDER = '{tenant}';
/** What a tenant id taken from a role name may look like. */
const TENANT_ID = '([A-Za-z0-9][A-Za-z0-9_-]*)';
const MAX_ROLES = 1000;

/** Why a tenant source is unusable, or undefined when it is fine. */
export function tenantSourceProblem(source: unknown): string | undefined {
  if (typeof source !== 'object' || source === null)
    return "must be { fromRole: '{tenant}-staff' } or { fromUserField: 'tenantId' }.";
  const { fromRole, fromUserField } = source as Record<string, unknown>;
  if ((fromRole === undefined) === (fromUserField === undefined))
    return 'takes exactly one of fromRole and fromUserField.';
  if (fromUserField !== undefined) {
    if (typeof fromUserField !== 'string' || !/^[A-Za-z][A-Za-z0-9_]*$/.test(fromUserField))
      return 'fromUserField must be the name of a _User field, e.g. "tenantId".';
    return undefined;
  }
  if (typeof fromRole === 'function') return undefined;
  if (typeof fromRole !== 'string' || fromRole.split(TENANT_PLACEHOLDER).length !== 2)
    return `fromRole must be a role name pattern with one ${TENANT_PLACEHOLDER} placeholder (e.g. '${TENANT_PLACEHOLDER}-staff') or a function (roleName) => tenant | undefined.`;
  return undefined;
}

/** A `fromRole` pattern as a function from a role name to its tenant. */
export function roleNameMatcher(pattern: string): (roleName: string) => string | undefined {
  const [before, after] = pattern.split(TENANT_PLACEHOLDER);
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const regex = new RegExp(`^${escape(before)}${TENANT_ID}${escape(after)}$`);
  return (roleName) => regex.exec(roleName)?.[1];
}

/** The tenant of `userId` according to `source`, read from Parse with the master key. */
export async function tenantOfUser(
  parse: ParseRestClient,
  userId: string,
  source: TenantSource,
  signal?: AbortSignal,
): Promise<TenantBinding> {
  if (source.fromUserField !== undefined) {
    const field = source.fromUserField;
    const [row] = await parse.find(
      '_User',
      { where: { objectId: userId }, keys: [field], limit: 1 },
      { masterKey: true },
      signal,
    );
    const value = row?.[field];
    if (typeof value === 'string' && value) return { tenantId: value };
    return {
      reason: `The user's _User.${field} is empty. Set it with the master key.`,
    };
  }
  const tenantOfRole =
    typeof source.fromRole === 'string' ? roleNameMatcher(source.fromRole) : source.fromRole;
  const roles = await parse.find(
    '_Role',
    {
      where: { users: { __type: 'Pointer', className: '_User', objectId: userId } },
      keys: ['name'],
      limit: MAX_ROLES,
    },
    { masterKey: true },
    signal,
  );
  const tenantRoles = new Map<string, string>();
  for (const role of roles) {
    const name = String(role.name);
    const tenant = tenantOfRole(name);
    if (typeof tenant === 'string' && tenant !== '') tenantRoles.set(name, tenant);
  }
  const tenants = [...new Set(tenantRoles.values())].sort();
  if (tenants.length === 1) return { tenantId: tenants[0] };
  const example =
    typeof source.fromRole === 'string'
      ? `the "${source.fromRole}" role of their tenant`
      : 'the role of their tenant';
  if (tenants.length === 0) {
    return {
      reason: `The user is a member of no tenant role. Add them to ${example} (master key).`,
    };
  }
  return {
    reason: `The user is a direct member of several tenant roles (${[...tenantRoles.keys()].sort().join(', ')}); keep exactly one.`,
  };
}
