/** Bump when the dataset changes shape: a start with an older marker re-seeds from scratch. */
export const DEMO_SEED_VERSION = 3;

export const DEMO_TENANTS = [
  { slug: 'acme', name: 'Acme Outfitters', plan: 'enterprise' },
  { slug: 'globex', name: 'Globex Tools', plan: 'growth' },
] as const;

/**
 * A user's tenant is their direct membership in `<slug>-staff` (the app module's
 * `auth.tenant: { fromRole: '{tenant}-staff' }`).
 * carol holds the admin role (which inherits every staff role) and is a direct member of acme-staff,
 * so an agent acting for her is bound to acme. `tenantId` on _User is display only: every user
 * can edit their own row, so nothing trusts it.
 */
export const DEMO_USERS = [
  { username: 'alice', tenantId: 'acme', fullName: 'Alice Martin', roles: ['acme-staff'] },
  { username: 'bob', tenantId: 'globex', fullName: 'Bob Chen', roles: ['globex-staff'] },
  { username: 'carol', tenantId: 'acme', fullName: 'Carol Diaz', roles: ['admin', 'acme-staff'] },
] as const;

/** The role whose direct members are a tenant's staff. */
export const staffRoleOf = (slug: string) => `${slug}-staff`;
/**
 * Held by the staff of every tenant (each `<slug>-staff` role is its child): class-level
 * permissions name this one role, so a class's schema does not list every tenant.
 */
export const ANY_STAFF_ROLE = 'staff';

/**
 * Roles and their child roles (whose members inherit the role): admin inherits every tenant's
 * staff role, and every tenant's staff role inherits `staff`.
 */
export const DEMO_ROLES: Array<{ name: string; childRoles: string[] }> = [
  { name: 'admin', childRoles: [] },
  ...DEMO_TENANTS.map((t) => ({ name: staffRoleOf(t.slug), childRoles: ['admin'] })),
  { name: ANY_STAFF_ROLE, childRoles: DEMO_TENANTS.map((t) => staffRoleOf(t.slug)) },
];

/** Classes the seeder owns (purged and rebuilt when the marker is missing or old). */
export const DEMO_CLASSES = [
  'Tenant',
  'Customer',
  'Product',
  'Order',
  'SupportTicket',
  'ApiCredential',
];
export const ORDERS_PER_TENANT = 1500;
export const CUSTOMERS_PER_TENANT = 40;
export const PRODUCTS_PER_TENANT = 25;
export const TICKETS_PER_TENANT = 30;

export const ptr = (className: string, objectId: string) => ({
  __type: 'Pointer',
  className,
  objectId,
});
export const date = (d: Date) => ({ __type: 'Date', iso: d.toISOString() });
/** Read by the tenant's staff and admins; changed by nobody but the master key. */
export const tenantReadAcl = (slug: string) => ({
  [`role:${staffRoleOf(slug)}`]: { read: true },
  'role:admin': { read: true },
});
/** Read and changed by the tenant's staff and admins. */
export const tenantAcl = (slug: string) => ({
  [`role:${staffRoleOf(slug)}`]: { read: true, write: true },
  'role:admin': { read: true, write: true },
});
/** Only the master key: no role, user or public entry. */
export const masterOnlyAcl = {};
