import type { ParseClassDefinition } from '../parse-server-host';
import { ANY_STAFF_ROLE } from './demo-dataset';
import type { ParseAdminClient } from './parse-admin-client';

// admin inherits every tenant's staff role, and so `staff` too.
const staff = { [`role:${ANY_STAFF_ROLE}`]: true };

/**
 * A class of tenant data is open to staff only (a fresh sign-up holds no role, so Parse refuses it
 * outright), and row ACLs then keep each tenant's staff to their own tenant's rows.
 */
const staffOnly = {
  find: staff,
  get: staff,
  count: staff,
  create: {},
  update: {},
  delete: {},
  addField: {},
};
const masterOnly = {
  find: {},
  get: {},
  count: {},
  create: {},
  update: {},
  delete: {},
  addField: {},
};

/**
 * Parse's own default: sign-up and login stay open to clients, and each user row is kept by its
 * ACL. Given in full because a CLP Parse applies replaces the whole CLP (an operation left out is
 * closed).
 */
const parseDefault = {
  find: { '*': true },
  get: { '*': true },
  count: { '*': true },
  create: { '*': true },
  update: { '*': true },
  delete: { '*': true },
  addField: { '*': true },
  protectedFields: { '*': [] },
};

const str = { type: 'String' };
const num = { type: 'Number' };
const bool = { type: 'Boolean' };
const dt = { type: 'Date' };
const pointerTo = (targetClass: string) => ({ type: 'Pointer', targetClass });

/**
 * The demo's classes: every field its models declare, and the class-level permissions. One list
 * for both ways they reach a server: Parse Server's `schema` option when the embedded demo starts
 * it (the classes exist before anything can ask for them), and the seed's schema step for a server
 * started without it (the test bed, the bench).
 */
export const DEMO_SCHEMAS: readonly ParseClassDefinition[] = [
  // The staff accounts' own fields; the class keeps Parse's default CLP.
  {
    className: '_User',
    fields: { fullName: str, tenantId: str },
    classLevelPermissions: parseDefault,
  },
  // Membership in a "<slug>-staff" role binds a user to a tenant: no client may touch roles.
  { className: '_Role', fields: {}, classLevelPermissions: masterOnly },
  {
    className: 'Tenant',
    fields: { slug: str, name: str, plan: str },
    classLevelPermissions: staffOnly,
  },
  {
    className: 'Customer',
    fields: {
      tenantId: str,
      name: str,
      email: str,
      phone: str,
      city: str,
      country: str,
      tier: str,
      lifetimeValue: num,
      isDeleted: bool,
      deletedAt: dt,
    },
    classLevelPermissions: {
      ...staffOnly,
      // Only admins change customers (Customer.anonymize is an admin agent method).
      update: { 'role:admin': true },
      delete: { 'role:admin': true },
      protectedFields: { '*': ['phone', 'email'], 'role:admin': [] },
    },
  },
  {
    className: 'Product',
    fields: {
      tenantId: str,
      sku: str,
      name: str,
      category: str,
      price: num,
      inStock: bool,
      specSheet: str,
    },
    classLevelPermissions: staffOnly,
  },
  {
    className: 'Order',
    fields: {
      tenantId: str,
      orderNumber: str,
      customer: pointerTo('Customer'),
      product: pointerTo('Product'),
      quantity: num,
      unitPrice: num,
      total: num,
      status: str,
      channel: str,
      placedAt: dt,
      isDeleted: bool,
      deletedAt: dt,
    },
    // Staff may update orders (Order.refund); the row ACL keeps them to their own tenant's rows,
    // under the agent's tenant scope. Finding is open to any signed-in user as well, because Parse
    // LiveQuery checks this permission without the user's roles (MCP resource subscriptions watch
    // orders): row ACLs still show each user only their own tenant's orders.
    classLevelPermissions: {
      ...staffOnly,
      find: { ...staff, requiresAuthentication: true },
      update: staff,
    },
  },
  {
    className: 'SupportTicket',
    fields: {
      tenantId: str,
      subject: str,
      body: str,
      priority: str,
      status: str,
      customer: pointerTo('Customer'),
    },
    // Row ACLs decide which tickets a user may change; staff can open and update tickets.
    classLevelPermissions: { ...staffOnly, create: staff, update: staff },
  },
  // Secrets: no client access at all; only the master key reads them.
  {
    className: 'ApiCredential',
    fields: { tenantId: str, service: str, apiKey: str, webhookSecret: str },
    classLevelPermissions: masterOnly,
  },
];

/** The seed's schema step: each demo class created, or given its missing fields and its CLP. */
export async function defineSchemas(client: ParseAdminClient): Promise<void> {
  for (const { className, fields, classLevelPermissions } of DEMO_SCHEMAS) {
    await client.upsertSchema(className, fields, classLevelPermissions);
  }
}
