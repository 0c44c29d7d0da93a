import {
  CUSTOMERS_PER_TENANT,
  date,
  ORDERS_PER_TENANT,
  PRODUCTS_PER_TENANT,
  ptr,
  TICKETS_PER_TENANT,
  masterOnlyAcl,
  tenantAcl,
  tenantReadAcl,
} from './demo-dataset';

// The rows of one tenant, drawn from one seeded generator: the same calls in the same order give
// the same dataset on every fresh seed, so the builders below run in a fixed order (customers,
// products, orders, tickets, credentials) and each draws its numbers in a fixed order too.

type Row = Record<string, unknown>;
type Random = () => number;

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

/** A generator for one seed: every fresh seed of the demo uses the same one. */
export const demoRandom = (): Random => mulberry32(20261122);

export function customerRows(slug: string, rand: Random): Row[] {
  const readAcl = tenantReadAcl(slug);
  return Array.from({ length: CUSTOMERS_PER_TENANT }, (_, i) => {
    const first = FIRST[Math.floor(rand() * FIRST.length)];
    const last = LAST[Math.floor(rand() * LAST.length)];
    const [city, country] = CITIES[Math.floor(rand() * CITIES.length)];
    const deleted = i % 13 === 7;
    return {
      tenantId: slug,
      name: `${first} ${last}`,
      email: `${first}.${last}.${i}@${slug}.example`.toLowerCase(),
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
}

export function productRows(slug: string, rand: Random): Array<Row & { price: number }> {
  return Array.from({ length: PRODUCTS_PER_TENANT }, (_, i) => {
    const category = CATEGORIES[i % CATEGORIES.length];
    return {
      tenantId: slug,
      sku: `${slug.toUpperCase()}-${category.slice(0, 3).toUpperCase()}-${100 + i}`,
      name: `${category[0].toUpperCase()}${category.slice(1)} model ${i + 1}`,
      category,
      price: Math.round((15 + rand() * 400) * 100) / 100,
      inStock: rand() > 0.2,
      specSheet: longText(rand, `${category} model ${i + 1}`, 12),
      ACL: tenantReadAcl(slug),
    };
  });
}

export interface OrderRefs {
  products: Array<{ price: number }>;
  productIds: string[];
  customerIds: string[];
}

export function orderRows(slug: string, rand: Random, refs: OrderRefs): Row[] {
  const { products, productIds, customerIds } = refs;
  return Array.from({ length: ORDERS_PER_TENANT }, (_, i) => {
    const p = Math.floor(rand() * productIds.length);
    const quantity = 1 + Math.floor(rand() * 4);
    const unitPrice = products[p].price;
    const placed = new Date(Date.UTC(2025, 0, 1) + Math.floor(rand() * 670) * 86400000 + i * 1000);
    const deleted = i % 50 === 49;
    return {
      tenantId: slug,
      orderNumber: `${slug.toUpperCase()}-${String(10000 + i)}`,
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
      ACL: tenantAcl(slug),
    };
  });
}

export function ticketRows(
  slug: string,
  rand: Random,
  refs: { customerIds: string[]; aliceId: string },
): Row[] {
  return Array.from({ length: TICKETS_PER_TENANT }, (_, i) => {
    // Most tickets are readable by the tenant's staff (and admins); every fifth is admin-only; in
    // acme, every seventh is private to alice.
    let ACL: Record<string, unknown> = tenantAcl(slug);
    if (i % 5 === 4) ACL = { 'role:admin': { read: true, write: true } };
    else if (slug === 'acme' && i % 7 === 3) ACL = { [refs.aliceId]: { read: true, write: true } };
    return {
      tenantId: slug,
      subject: `Ticket ${i + 1}: ${['damaged item', 'late delivery', 'billing question', 'return request'][i % 4]}`,
      body: longText(rand, 'order', i % 6 === 0 ? 40 : 3),
      priority: PRIORITIES[Math.floor(rand() * PRIORITIES.length)],
      status: ['open', 'pending', 'closed'][i % 3],
      customer: ptr('Customer', refs.customerIds[i % refs.customerIds.length]),
      ACL,
    };
  });
}

/** Secrets of the tenant's integrations: only the master key reads them. */
export function credentialRows(slug: string, rand: Random): Row[] {
  return [
    {
      tenantId: slug,
      service: 'payments',
      apiKey: `sk_live_${slug}_${Math.floor(rand() * 1e12)}`,
      webhookSecret: `whsec_${slug}_${Math.floor(rand() * 1e12)}`,
      ACL: masterOnlyAcl,
    },
    {
      tenantId: slug,
      service: 'shipping',
      apiKey: `ship_${slug}_${Math.floor(rand() * 1e12)}`,
      webhookSecret: `whsec_ship_${slug}`,
      ACL: masterOnlyAcl,
    },
  ];
}
