/**
 * The data the differential suite reads: users of two tenants and an admin role, a visible class
 * and a hidden class for pointers to point into, and seeded rows of adversarial values with a mix
 * of ACLs. Written with the master key through Parse REST, as an application would.
 */
import {
  createObject,
  createRole,
  createUser,
  defineClass,
  pointer,
  type Acl,
  type SeededUser,
} from '../harness/fixtures';
import {
  adversarialArray,
  adversarialDate,
  adversarialNumber,
  adversarialObject,
  adversarialString,
  type ValueContext,
} from './adversarial-values';
import type { SeededRandom } from './seeded-random';

export interface DifferentialNames {
  item: string;
  visible: string;
  hidden: string;
  adminRole: string;
}

export function differentialNames(run: string): DifferentialNames {
  return {
    item: `DiffItem_${run}`,
    visible: `DiffRef_${run}`,
    hidden: `DiffSecret_${run}`,
    adminRole: `DiffAdmins_${run}`,
  };
}

export interface DifferentialSeed {
  names: DifferentialNames;
  alice: SeededUser;
  bob: SeededUser;
  carol: SeededUser;
  /** Owns rows nobody else's identity may read (only the operator sees them). */
  dave: SeededUser;
  itemIds: string[];
}

/** The item class's columns; `internalNote` is protected from every user (protectedFields). */
export const ITEM_FIELDS: Record<string, { type: string; targetClass?: string }> = {
  seq: { type: 'Number' },
  tenant: { type: 'String' },
  label: { type: 'String' },
  amount: { type: 'Number' },
  flag: { type: 'Boolean' },
  when: { type: 'Date' },
  data: { type: 'Object' },
  tags: { type: 'Array' },
  internalNote: { type: 'String' },
};

export async function seedDifferential(
  run: string,
  rng: SeededRandom,
  rows: number,
): Promise<DifferentialSeed> {
  const names = differentialNames(run);
  const [alice, bob, carol, dave] = await Promise.all(
    ['alice', 'bob', 'carol', 'dave'].map((n) => createUser(`diff_${n}_${run}`)),
  );
  await createRole(names.adminRole, { users: [carol.objectId] });

  await defineClass(names.hidden, { code: { type: 'String' } });
  await defineClass(names.visible, { name: { type: 'String' } });
  const hiddenIds: string[] = [];
  for (let i = 0; i < 3; i++) hiddenIds.push(await createObject(names.hidden, { code: `s${i}` }));
  const ctx: ValueContext = {
    visibleClass: names.visible,
    visibleIds: [],
    hiddenClass: names.hidden,
    hiddenIds,
  };
  const visibleIds: string[] = [];
  for (let i = 0; i < 4; i++) {
    visibleIds.push(await createObject(names.visible, { name: adversarialString(ctx, rng) }));
  }
  ctx.visibleIds = visibleIds;

  await defineClass(
    names.item,
    {
      ...ITEM_FIELDS,
      ref: { type: 'Pointer', targetClass: names.visible },
      secret: { type: 'Pointer', targetClass: names.hidden },
    },
    {
      find: { '*': true },
      get: { '*': true },
      count: { '*': true },
      create: {},
      update: {},
      delete: {},
      addField: {},
      protectedFields: { '*': ['internalNote'] },
    },
  );

  const role = `role:${names.adminRole}`;
  const acls: Array<Acl | undefined> = [
    undefined,
    { '*': { read: true } },
    { [alice.objectId]: { read: true } },
    { [bob.objectId]: { read: true } },
    { [role]: { read: true } },
    { [alice.objectId]: { read: true }, [bob.objectId]: { read: true } },
    { [alice.objectId]: { read: true }, [role]: { read: true } },
    { [dave.objectId]: { read: true } },
  ];

  const itemIds: string[] = [];
  for (let seq = 0; seq < rows; seq++) {
    const row: Record<string, unknown> = {
      seq,
      tenant: rng.pick(['acme', 'globex']),
    };
    const optional: Record<string, () => unknown> = {
      label: () => adversarialString(ctx, rng),
      amount: () => adversarialNumber(rng),
      flag: () => rng.chance(0.5),
      when: () => ({ __type: 'Date', iso: adversarialDate(rng) }),
      data: () => adversarialObject(ctx, rng),
      tags: () => adversarialArray(ctx, rng),
      internalNote: () => adversarialString(ctx, rng),
      ref: () => pointer(names.visible, rng.pick(visibleIds)),
      secret: () => pointer(names.hidden, rng.pick(hiddenIds)),
    };
    for (const [field, make] of Object.entries(optional)) {
      // Missing fields and nulls are values too.
      if (rng.chance(0.12)) continue;
      row[field] = rng.chance(0.06) ? null : make();
    }
    itemIds.push(await createObject(names.item, row, rng.pick(acls)));
  }
  return { names, alice, bob, carol, dave, itemIds };
}
