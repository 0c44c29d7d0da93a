import {
  DEMO_CLASSES,
  DEMO_ROLES,
  DEMO_SEED_VERSION,
  DEMO_TENANTS,
  DEMO_USERS,
  masterOnlyAcl,
  ptr,
  tenantReadAcl,
} from './demo-dataset';
import {
  credentialRows,
  customerRows,
  demoRandom,
  orderRows,
  productRows,
  ticketRows,
} from './demo-rows';
import { defineSchemas } from './demo-schemas';
import type { ParseAdminClient } from './parse-admin-client';
import type { RowWriter } from './postgres-row-writer';

const MARKER = 'parseAgentDemoSeedVersion';

export interface SeedReport {
  seeded: boolean;
  counts: Record<string, number>;
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
  const userIds = await seedUsers(client, password);
  await seedRoles(client, userIds);

  for (const className of DEMO_CLASSES) await client.purge(className);
  await defineSchemas(client);

  const rand = demoRandom();
  await writer.createMany(
    'Tenant',
    DEMO_TENANTS.map((t) => ({ ...t, ACL: tenantReadAcl(t.slug) })),
  );
  // Every row carries its tenant's ACL, so Parse itself keeps each tenant's staff to their own
  // rows, under the agent layer and on /parse alike.
  for (const { slug } of DEMO_TENANTS) {
    const customerIds = await writer.createMany('Customer', customerRows(slug, rand));
    const products = productRows(slug, rand);
    const productIds = await writer.createMany('Product', products);
    await writer.createMany('Order', orderRows(slug, rand, { products, productIds, customerIds }));
    const tickets = ticketRows(slug, rand, { customerIds, aliceId: userIds.alice });
    await writer.createMany('SupportTicket', tickets);
    await writer.createMany('ApiCredential', credentialRows(slug, rand));
  }

  await client.request('PUT', '/config', { params: { [MARKER]: DEMO_SEED_VERSION } });
  return { seeded: true, counts: await countAll(client) };
}

/** The demo users, found or created, with the demo password; returns their ids by username. */
async function seedUsers(
  client: ParseAdminClient,
  password: string,
): Promise<Record<string, string>> {
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
  return userIds;
}

/**
 * The roles with their members and child roles. Roles decide tenancy, so only the master key reads
 * or changes them: no ACL entry at all, and the _Role CLP (see defineSchemas) closes the class to
 * clients.
 */
async function seedRoles(client: ParseAdminClient, userIds: Record<string, string>): Promise<void> {
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
}

async function countAll(client: ParseAdminClient): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const className of [...DEMO_CLASSES, '_User', '_Role']) {
    counts[className] = await client.count(className).catch(() => 0);
  }
  return counts;
}
