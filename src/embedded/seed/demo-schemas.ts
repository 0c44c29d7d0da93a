import { ANY_STAFF_ROLE } from './demo-dataset';
import type { ParseAdminClient } from './parse-admin-client';

/**
 * Class-level permissions: a class of tenant data is open to staff only (a fresh sign-up holds no
 * role, so Parse refuses it outright), and row ACLs then keep each tenant's staff to their own
 * tenant's rows. Only the master key reads, creates, changes or deletes roles.
 */
export async function defineSchemas(client: ParseAdminClient): Promise<void> {
  // admin inherits every tenant's staff role, and so `staff` too.
  const staff = { [`role:${ANY_STAFF_ROLE}`]: true };
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
  // Membership in a "<slug>-staff" role binds a user to a tenant: no client may touch roles.
  await client.upsertSchema('_Role', {}, masterOnly);
  const str = { type: 'String' };
  const num = { type: 'Number' };
  const bool = { type: 'Boolean' };
  const dt = { type: 'Date' };
  await client.upsertSchema('Tenant', { slug: str, name: str, plan: str }, staffOnly);
  await client.upsertSchema(
    'Customer',
    {
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
    {
      ...staffOnly,
      // Only admins change customers (Customer.anonymize is an admin agent method).
      update: { 'role:admin': true },
      delete: { 'role:admin': true },
      protectedFields: { '*': ['phone', 'email'], 'role:admin': [] },
    },
  );
  await client.upsertSchema(
    'Product',
    {
      tenantId: str,
      sku: str,
      name: str,
      category: str,
      price: num,
      inStock: bool,
      specSheet: str,
    },
    staffOnly,
  );
  await client.upsertSchema(
    'Order',
    {
      tenantId: str,
      orderNumber: str,
      customer: { type: 'Pointer', targetClass: 'Customer' },
      product: { type: 'Pointer', targetClass: 'Product' },
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
    // under the agent's tenant scope.
    { ...staffOnly, update: staff },
  );
  await client.upsertSchema(
    'SupportTicket',
    {
      tenantId: str,
      subject: str,
      body: str,
      priority: str,
      status: str,
      customer: { type: 'Pointer', targetClass: 'Customer' },
    },
    // Row ACLs decide which tickets a user may change; staff can open and update tickets.
    { ...staffOnly, create: staff, update: staff },
  );
  // Secrets: no client access at all; only the master key reads them.
  await client.upsertSchema(
    'ApiCredential',
    { tenantId: str, service: str, apiKey: str, webhookSecret: str },
    masterOnly,
  );
}
