import { ParseAdminClient } from './parse-admin-client';
import type { RowWriter } from './postgres-row-writer';

/** Bump when the dataset changes shape: a start with an older marker re-seeds from scratch. */
export const DEMO_SEED_VERSION = 3;
const MARKER = 'parseAgentDemoSeedVersion';

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
const DEMO_ROLES: Array<{ name: string; childRoles: string[] }> = [
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

export interface SeedReport {
  seeded: boolean;
  counts: Record<string, number>;
}

/** A small deterministic PRNG so every fresh seed produces the same dataset. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ptr = (className: string, objectId: string) => ({ __type: 'Pointer', className, objectId });
const date = (d: Date) => ({ __type: 'Date', iso: d.toISOString() });
/** Read by the tenant's staff and admins; changed by nobody but the master key. */
const tenantReadAcl = (slug: string) => ({
  [`role:${staffRoleOf(slug)}`]: { read: true },
  'role:admin': { read: true },
});
/** Read and changed by the tenant's staff and admins. */
export const tenantAcl = (slug: string) => ({
  [`role:${staffRoleOf(slug)}`]: { read: true, write: true },
  'role:admin': { read: true, write: true },
});
/** Only the master key: no role, user or public entry. */
const masterOnlyAcl = {};

const FIRST = [
  'Ana',
  'Ben',
  'Chloe',
  'Dev',
  'Eli',
  'Fatima',
  'Gus',
  'Hana',
  'Ivan',
  'June',
  'Kofi',
  'Lena',
  'Mo',
  'Nia',
];
const LAST = [
  'Silva',
  'Okafor',
  'Novak',
  'Tanaka',
  'Haddad',
  'Larsen',
  'Moreau',
  'Patel',
  'Reyes',
  'Weber',
];
const CITIES: Array<[string, string]> = [
  ['Lisbon', 'PT'],
  ['Berlin', 'DE'],
  ['Austin', 'US'],
  ['Toronto', 'CA'],
  ['Osaka', 'JP'],
  ['Lyon', 'FR'],
];
const CATEGORIES = ['tents', 'backpacks', 'lighting', 'cookware', 'apparel'];
const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'refunded', 'cancelled'];
const CHANNELS = ['web', 'mobile', 'store'];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];

function longText(rand: () => number, topic: string, paragraphs: number): string {
  const sentences = [
    `The ${topic} was reviewed by the support team.`,
    'Customer reported the issue after the second use and attached photos.',
    'Warehouse confirmed the batch number and checked the remaining stock for the same defect.',
    'A replacement was offered; the customer asked for a refund instead.',
    'Follow-up scheduled with the supplier to discuss quality control on future shipments.',
    'Notes from the call were added to the account history for later reference.',
  ];
  const out: string[] = [];
  for (let p = 0; p < paragraphs; p++) {
    const para: string[] = [];
    for (let s = 0; s < 8; s++) para.push(sentences[Math.floor(rand() * sentences.length)]);
    out.push(para.join(' '));
  }
  return out.join('\n\n');
}

export interface SeedOptions {
  /**
   * Where the demo classes' rows go (users, roles, schemas and the marker always go through Parse).
   * Default: the client, through Parse's /batch endpoint. The embedded demo passes a
   * PostgresRowWriter on Parse's own database: one INSERT per class instead of a Parse write per
   * row (the 3,000 orders are most of a first start otherwise).
   */
  rows?: RowWriter;
}

/**
 * Seeds the demo dataset once. Users and roles are found or created; the demo classes are rebuilt
 * whole unless the Parse Config marker says this version is already in place, so a restart (or a
 * start after a crash mid-seed) never duplicates rows.
 */
export async function seedDemoData(
  client: ParseAdminClient,
  password: string,
  options: SeedOptions = {},
): Promise<SeedReport> {
  const writer: RowWriter = options.rows ?? client;
  const config = await client.request<{ params: Record<string, unknown> }>('GET', '/config');
  if (config.params?.[MARKER] === DEMO_SEED_VERSION) {
    return { seeded: false, counts: await countAll(client) };
  }

  const userIds: Record<string, string> = {};
  for (const u of DEMO_USERS) {
    const [existing] = await client.find('_User', { username: u.username }, 1);
    if (existing) {
      userIds[u.username] = existing.objectId as string;
      await client.request('PUT', `/users/${existing.objectId as string}`, { password });
    } else {
      const created = await client.request<{ objectId: string }>('POST', '/users', {
        username: u.username,
        password,
        email: `${u.username}@example.com`,
        fullName: u.fullName,
        tenantId: u.tenantId,
      });
      userIds[u.username] = created.objectId;
    }
    // A staff account is visible to its own tenant's staff and admins, not to everyone.
    const id = userIds[u.username];
    await client.request('PUT', `/users/${id}`, {
      ACL: { [id]: { read: true, write: true }, ...tenantReadAcl(u.tenantId) },
    });
  }

  // Roles decide tenancy, so only the master key reads or changes them: no ACL entry at all, and
  // the _Role CLP below closes the class to clients.
  const roleIds: Record<string, string> = {};
  for (const { name, childRoles } of DEMO_ROLES) {
    const members = DEMO_USERS.filter((u) => (u.roles as readonly string[]).includes(name)).map(
      (u) => ptr('_User', userIds[u.username]),
    );
    const [existing] = await client.find('_Role', { name }, 1);
    const body: Record<string, unknown> = { ACL: masterOnlyAcl };
    // (An AddRelation with no objects fails on Parse's PostgreSQL adapter.)
    if (members.length) body.users = { __op: 'AddRelation', objects: members };
    if (childRoles.length) {
      body.roles = {
        __op: 'AddRelation',
        objects: childRoles.map((child) => ptr('_Role', roleIds[child])),
      };
    }
    if (existing) {
      roleIds[name] = existing.objectId as string;
      await client.request('PUT', `/roles/${roleIds[name]}`, body);
    } else {
      const created = await client.request<{ objectId: string }>('POST', '/roles', {
        name,
        ...body,
      });
      roleIds[name] = created.objectId;
    }
  }

  for (const className of DEMO_CLASSES) await client.purge(className);
  await defineSchemas(client);

  const rand = mulberry32(20261122);
  await writer.createMany(
    'Tenant',
    DEMO_TENANTS.map((t) => ({ ...t, ACL: tenantReadAcl(t.slug) })),
  );

  for (const tenant of DEMO_TENANTS) {
    // Every row carries its tenant's ACL, so Parse itself keeps each tenant's staff to their own
    // rows, under the agent layer and on /parse alike.
    const readAcl = tenantReadAcl(tenant.slug);
    const writeAcl = tenantAcl(tenant.slug);

    const customers = Array.from({ length: CUSTOMERS_PER_TENANT }, (_, i) => {
      const first = FIRST[Math.floor(rand() * FIRST.length)];
      const last = LAST[Math.floor(rand() * LAST.length)];
      const [city, country] = CITIES[Math.floor(rand() * CITIES.length)];
      const deleted = i % 13 === 7;
      return {
        tenantId: tenant.slug,
        name: `${first} ${last}`,
        email: `${first}.${last}.${i}@${tenant.slug}.example`.toLowerCase(),
        phone: `+1-555-${String(1000 + i).padStart(4, '0')}`,
        city,
        country,
        tier: ['bronze', 'silver', 'gold'][Math.floor(rand() * 3)],
        lifetimeValue: Math.round(rand() * 500000) / 100,
        isDeleted: deleted,
        ...(deleted ? { deletedAt: date(new Date(Date.UTC(2026, 5, 1 + i))) } : {}),
        // Staff read; admins also change (Customer.anonymize), and the CLP allows no one else.
        ACL: { ...readAcl, 'role:admin': { read: true, write: true } },
      };
    });
    const customerIds = await writer.createMany('Customer', customers);

    const products = Array.from({ length: PRODUCTS_PER_TENANT }, (_, i) => {
      const category = CATEGORIES[i % CATEGORIES.length];
      return {
        tenantId: tenant.slug,
        sku: `${tenant.slug.toUpperCase()}-${category.slice(0, 3).toUpperCase()}-${100 + i}`,
        name: `${category[0].toUpperCase()}${category.slice(1)} model ${i + 1}`,
        category,
        price: Math.round((15 + rand() * 400) * 100) / 100,
        inStock: rand() > 0.2,
        specSheet: longText(rand, `${category} model ${i + 1}`, 12),
        ACL: readAcl,
      };
    });
    const productIds = await writer.createMany('Product', products);

    const orders = Array.from({ length: ORDERS_PER_TENANT }, (_, i) => {
      const p = Math.floor(rand() * productIds.length);
      const quantity = 1 + Math.floor(rand() * 4);
      const unitPrice = products[p].price;
      const placed = new Date(
        Date.UTC(2025, 0, 1) + Math.floor(rand() * 670) * 86400000 + i * 1000,
      );
      const deleted = i % 50 === 49;
      return {
        tenantId: tenant.slug,
        orderNumber: `${tenant.slug.toUpperCase()}-${String(10000 + i)}`,
        customer: ptr('Customer', customerIds[Math.floor(rand() * customerIds.length)]),
        product: ptr('Product', productIds[p]),
        quantity,
        unitPrice,
        total: Math.round(quantity * unitPrice * 100) / 100,
        status: STATUSES[Math.floor(rand() * STATUSES.length)],
        channel: CHANNELS[Math.floor(rand() * CHANNELS.length)],
        placedAt: date(placed),
        isDeleted: deleted,
        ...(deleted ? { deletedAt: date(new Date(placed.getTime() + 7 * 86400000)) } : {}),
        // The tenant's staff refund their own orders (Order.refund); nobody else's.
        ACL: writeAcl,
      };
    });
    await writer.createMany('Order', orders);

    const tickets = Array.from({ length: TICKETS_PER_TENANT }, (_, i) => {
      // Most tickets are readable by the tenant's staff (and admins); every fifth is admin-only;
      // in acme, every seventh is private to alice.
      let ACL: Record<string, unknown> = writeAcl;
      if (i % 5 === 4) ACL = { 'role:admin': { read: true, write: true } };
      else if (tenant.slug === 'acme' && i % 7 === 3)
        ACL = { [userIds.alice]: { read: true, write: true } };
      return {
        tenantId: tenant.slug,
        subject: `Ticket ${i + 1}: ${['damaged item', 'late delivery', 'billing question', 'return request'][i % 4]}`,
        body: longText(rand, 'order', i % 6 === 0 ? 40 : 3),
        priority: PRIORITIES[Math.floor(rand() * PRIORITIES.length)],
        status: ['open', 'pending', 'closed'][i % 3],
        customer: ptr('Customer', customerIds[i % customerIds.length]),
        ACL,
      };
    });
    await writer.createMany('SupportTicket', tickets);

    await writer.createMany('ApiCredential', [
      {
        tenantId: tenant.slug,
        service: 'payments',
        apiKey: `sk_live_${tenant.slug}_${Math.floor(rand() * 1e12)}`,
        webhookSecret: `whsec_${tenant.slug}_${Math.floor(rand() * 1e12)}`,
        ACL: masterOnlyAcl,
      },
      {
        tenantId: tenant.slug,
        service: 'shipping',
        apiKey: `ship_${tenant.slug}_${Math.floor(rand() * 1e12)}`,
        webhookSecret: `whsec_ship_${tenant.slug}`,
        ACL: masterOnlyAcl,
      },
    ]);
  }

  await client.request('PUT', '/config', { params: { [MARKER]: DEMO_SEED_VERSION } });
  return { seeded: true, counts: await countAll(client) };
}

/**
 * Class-level permissions: a class of tenant data is open to staff only (a fresh sign-up holds no
 * role, so Parse refuses it outright), and row ACLs then keep each tenant's staff to their own
 * tenant's rows. Only the master key reads, creates, changes or deletes roles.
 */
async function defineSchemas(client: ParseAdminClient): Promise<void> {
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

async function countAll(client: ParseAdminClient): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const className of [...DEMO_CLASSES, '_User', '_Role']) {
    counts[className] = await client.count(className).catch(() => 0);
  }
  return counts;
}
