/**
 * A seeded generator of random valid aggregation pipelines over the oracle's order schema (the
 * demo's Order and Customer, plus an array and an object field). It tracks the fields of the
 * rows stage by stage (what exists, of which kind, which fields identify a row) so every
 * reference is valid and every $limit/$skip follows a total order: the same pipeline has one
 * right answer, which mingo computes independently.
 *
 * What it avoids is what the oracle cannot judge, each listed in docs/analytics-postgres.md
 * ("How pipelines are checked"): mingo's own gaps (time zones in $dateTrunc east of UTC, the
 * `UTC` zone name, $toUpper/$substrCP of null, empty $bucket buckets) and what MongoDB leaves
 * unspecified (the order of ties, of $addToSet, of unsorted rows).
 */
import { SeededRandom } from './seeded-random';

export type Kind = 'string' | 'number' | 'date' | 'array' | 'object' | 'bool' | 'pointer';

interface Field {
  kind: Kind;
  /** May be missing on some rows. */
  optional: boolean;
  /** Sub-fields of an object (a joined customer, `meta`). */
  sub?: Record<string, Kind>;
}

export interface Model {
  fields: Record<string, Field>;
  /** Fields that together tell rows apart, or undefined when nothing does. */
  unique?: string[];
  /** The rows are in a total order (a $sort on a unique key). */
  ordered: boolean;
  /** No further stage may follow ($count, $facet). */
  done: boolean;
}

export type Stage = Record<string, unknown>;

export const FAMILIES = [
  'basic',
  'shape',
  'unwind',
  'group',
  'replaceRoot',
  'expressions',
  'facet',
  'lookup',
  'window',
] as const;
export type Family = (typeof FAMILIES)[number];

export const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'refunded', 'cancelled'];
export const CHANNELS = ['web', 'mobile', 'store'];
export const TAGS = ['gift', 'promo', 'bulk', 'rush'];
export const TIERS = ['bronze', 'silver', 'gold'];
/** Zones mingo computes right for every operator used with them (see the file comment). */
const ZONES = ['America/New_York', 'Europe/Lisbon', '-03:00', 'Asia/Kolkata', '+05:30'];
const WEST_ZONES = ['America/New_York', 'Europe/Lisbon', '-03:00'];
/** Zones without daylight saving: mingo adds calendar units as fixed hours across a DST change. */
const FIXED_ZONES = ['+05:30', '-03:00', 'Asia/Kolkata'];

export function orderModel(): Model {
  return {
    fields: {
      objectId: { kind: 'string', optional: false },
      orderNumber: { kind: 'string', optional: false },
      status: { kind: 'string', optional: true },
      channel: { kind: 'string', optional: false },
      quantity: { kind: 'number', optional: false },
      unitPrice: { kind: 'number', optional: false },
      total: { kind: 'number', optional: true },
      placedAt: { kind: 'date', optional: false },
      tags: { kind: 'array', optional: true },
      meta: { kind: 'object', optional: true, sub: { source: 'string', score: 'number' } },
      customer: { kind: 'pointer', optional: false },
      tenantId: { kind: 'string', optional: false },
    },
    unique: ['objectId'],
    ordered: false,
    done: false,
  };
}

const clone = (m: Model): Model => ({
  fields: Object.fromEntries(Object.entries(m.fields).map(([k, f]) => [k, { ...f }])),
  unique: m.unique ? [...m.unique] : undefined,
  ordered: m.ordered,
  done: m.done,
});

export class PipelineGenerator {
  private names = 0;

  constructor(
    private readonly r: SeededRandom,
    private readonly families: readonly Family[],
    private readonly joinClass: string,
  ) {}

  private has(f: Family): boolean {
    return this.families.includes(f);
  }

  private fresh(prefix: string): string {
    this.names += 1;
    return `${prefix}${this.names}`;
  }

  private fieldsOf(m: Model, ...kinds: Kind[]): string[] {
    return Object.keys(m.fields).filter((k) => kinds.includes(m.fields[k].kind));
  }

  /** A pipeline of 1-`maxStages` stages. */
  pipeline(maxStages = 5, start = orderModel()): { pipeline: Stage[]; model: Model } {
    let m = clone(start);
    const out: Stage[] = [];
    const n = this.r.int(1, maxStages);
    for (let i = 0; i < n && !m.done; i++) {
      const next = this.stage(m, out.length === 0);
      if (!next) continue;
      out.push(...next.stages);
      m = next.model;
    }
    if (!out.length) out.push({ $match: {} });
    return { pipeline: out, model: m };
  }

  private stage(m: Model, first: boolean): { stages: Stage[]; model: Model } | undefined {
    const options: Array<() => { stages: Stage[]; model: Model } | undefined> = [
      () => this.match(m),
      () => this.sort(m),
      () => this.limitSkip(m),
      () => this.group(m),
      () => this.projectFields(m),
    ];
    if (first) options.push(() => this.count());
    if (this.has('shape'))
      options.push(
        () => this.addFields(m),
        () => this.unset(m),
        () => this.projectExpr(m),
      );
    if (this.has('unwind') || this.has('basic')) options.push(() => this.unwind(m));
    if (this.has('group'))
      options.push(
        () => this.sortByCount(m),
        () => this.bucket(m),
        () => this.bucketAuto(m),
      );
    if (this.has('replaceRoot')) options.push(() => this.replaceRoot(m));
    if (this.has('facet')) options.push(() => this.facet(m));
    if (this.has('lookup') || this.has('basic')) options.push(() => this.lookup(m));
    if (this.has('lookup')) options.push(() => this.lookupPipeline(m));
    if (this.has('window')) options.push(() => this.window(m));
    return this.r.pick(options)();
  }

  // ---- values -----------------------------------------------------------------------------

  private literalFor(kind: Kind): unknown {
    switch (kind) {
      case 'number':
        return this.r.int(0, 120);
      case 'date':
        return {
          __type: 'Date',
          iso: new Date(Date.UTC(2024, this.r.int(0, 11), this.r.int(1, 28))).toISOString(),
        };
      case 'bool':
        return this.r.chance(0.5);
      default:
        return this.r.pick([...STATUSES, ...CHANNELS, ...TIERS, 'O-1', 'zzz']);
    }
  }

  private stringValues(field: string): string[] {
    if (field === 'status') return STATUSES;
    if (field === 'channel' || field.endsWith('source')) return CHANNELS;
    if (field === 'tenantId') return ['acme', 'globex'];
    if (field.endsWith('tier')) return TIERS;
    if (field === 'tags') return TAGS;
    return [...STATUSES.slice(0, 2), ...TAGS.slice(0, 2), 'O-00001'];
  }

  // ---- stages -----------------------------------------------------------------------------

  private match(m: Model): { stages: Stage[]; model: Model } | undefined {
    if (this.has('expressions') && this.r.chance(0.3)) {
      return { stages: [{ $match: { $expr: this.bool(m, 2) } }], model: m };
    }
    const candidates = this.fieldsOf(m, 'string', 'number', 'date', 'array', 'bool');
    if (!candidates.length) return undefined;
    const f = this.r.pick(candidates);
    const kind = m.fields[f].kind;
    let cond: unknown;
    const roll = this.r.int(0, 3);
    if (kind === 'number') {
      cond =
        roll === 0
          ? { $gte: this.r.int(0, 100) }
          : roll === 1
            ? { $lt: this.r.int(10, 120) }
            : { $gt: this.r.int(0, 60), $lte: this.r.int(60, 130) };
    } else if (kind === 'date') {
      cond = { [this.r.pick(['$gte', '$lt'])]: this.literalFor('date') };
    } else if (kind === 'bool') {
      cond = this.r.chance(0.5);
    } else {
      const values = this.stringValues(f);
      cond =
        roll === 0
          ? this.r.pick(values)
          : roll === 1
            ? { $in: this.r.some(values, 3) }
            : roll === 2
              ? { $exists: this.r.chance(0.6) }
              : { $nin: this.r.some(values, 2) };
    }
    return { stages: [{ $match: { [f]: cond } }], model: m };
  }

  private sortSpec(m: Model, keys = this.r.int(1, 2)): Record<string, 1 | -1> | undefined {
    if (!m.unique) return undefined;
    const spec: Record<string, 1 | -1> = {};
    const sortable = this.fieldsOf(m, 'string', 'number', 'date', 'bool', 'pointer');
    for (const f of this.r.some(sortable, keys)) spec[f] = this.r.chance(0.5) ? 1 : -1;
    for (const f of m.unique) if (!(f in spec)) spec[f] = this.r.chance(0.5) ? 1 : -1;
    return spec;
  }

  private sort(m: Model): { stages: Stage[]; model: Model } | undefined {
    const spec = this.sortSpec(m);
    if (!spec) return undefined;
    const out = clone(m);
    out.ordered = true;
    return { stages: [{ $sort: spec }], model: out };
  }

  private limitSkip(m: Model): { stages: Stage[]; model: Model } | undefined {
    if (!m.ordered) return this.sort(m);
    return { stages: [{ [this.r.pick(['$limit', '$skip'])]: this.r.int(1, 30) }], model: m };
  }

  private count(): { stages: Stage[]; model: Model } {
    return {
      stages: [{ $count: 'n' }],
      model: {
        fields: { n: { kind: 'number', optional: false } },
        unique: [],
        ordered: true,
        done: true,
      },
    };
  }

  private groupKey(m: Model): { key: unknown; kind: Kind } {
    const roll = this.r.int(0, this.has('expressions') ? 4 : 2);
    const strings = this.fieldsOf(m, 'string', 'pointer', 'bool');
    if (roll === 0 || !strings.length) return { key: null, kind: 'string' };
    if (roll === 1) return { key: `$${this.r.pick(strings)}`, kind: 'string' };
    if (roll === 2) {
      // Documents sort key by key here; MongoDB orders a document missing a key differently.
      const always = strings.filter((f) => !m.fields[f].optional);
      if (!always.length) return { key: null, kind: 'string' };
      const [a, b] = [this.r.pick(always), this.r.pick(always)];
      return { key: a === b ? { a: `$${a}` } : { a: `$${a}`, b: `$${b}` }, kind: 'object' };
    }
    if (roll === 3) return { key: this.str(m, 1), kind: 'string' };
    return { key: this.num(m, 1), kind: 'number' };
  }

  private group(m: Model): { stages: Stage[]; model: Model } | undefined {
    const { key, kind } = this.groupKey(m);
    const spec: Record<string, unknown> = { _id: key };
    const fields: Record<string, Field> = { _id: { kind, optional: true } };
    const nums = this.fieldsOf(m, 'number');
    const strs = this.fieldsOf(m, 'string');
    const n = this.r.int(1, 3);
    for (let i = 0; i < n; i++) {
      const roll = this.r.int(0, this.has('group') ? 7 : 4);
      if (roll === 0 || !nums.length) {
        spec.n = { $sum: 1 };
        fields.n = { kind: 'number', optional: false };
      } else if (roll <= 3) {
        const op = this.r.pick(['$sum', '$avg', '$min', '$max']);
        const name = this.fresh(op.slice(1));
        const arg =
          this.has('expressions') && this.r.chance(0.3) ? this.num(m, 1) : `$${this.r.pick(nums)}`;
        spec[name] = { [op]: arg };
        fields[name] = { kind: 'number', optional: op !== '$sum' };
      } else if (roll === 4 && strs.length) {
        const name = this.fresh('m');
        spec[name] = { [this.r.pick(['$min', '$max'])]: `$${this.r.pick(strs)}` };
        fields[name] = { kind: 'string', optional: true };
      } else if (roll === 5) {
        spec.c = { $count: {} };
        fields.c = { kind: 'number', optional: false };
      } else if (roll === 6 && m.ordered) {
        const f = this.r.pick([...nums, ...strs]);
        const name = this.fresh(this.r.pick(['first', 'last']));
        spec[name] = { [`$${name.replace(/\d+$/, '')}`]: `$${f}` };
        fields[name] = { kind: m.fields[f].kind, optional: true };
      } else if (nums.length) {
        const f = this.r.pick(nums);
        const name = this.fresh('set_');
        // $push order needs an order; $addToSet has none (compared as sets).
        spec[name] = { $addToSet: { $ifNull: [`$${f}`, 0] } };
        fields[name] = { kind: 'array', optional: false };
      }
    }
    return {
      stages: [{ $group: spec }],
      model: { fields, unique: ['_id'], ordered: false, done: false },
    };
  }

  private projectFields(m: Model): { stages: Stage[]; model: Model } | undefined {
    const names = Object.keys(m.fields).filter((k) => k !== '_id' && k !== 'objectId');
    const keep = this.r.some(names, 4);
    if (!keep.length) return undefined;
    const spec: Record<string, unknown> = {};
    for (const k of keep) spec[k] = 1;
    const fields: Record<string, Field> = {};
    for (const k of keep) fields[k] = m.fields[k];
    const idName = m.fields._id ? '_id' : m.fields.objectId ? 'objectId' : undefined;
    let unique: string[] | undefined;
    if (idName && this.r.chance(0.6)) {
      if (idName === 'objectId') spec.objectId = 1;
      fields[idName] = m.fields[idName];
      unique = m.unique?.every((u) => u === idName || keep.includes(u)) ? m.unique : undefined;
    } else {
      spec._id = 0;
      unique = m.unique?.every((u) => keep.includes(u)) ? m.unique : undefined;
    }
    return {
      stages: [{ $project: spec }],
      model: { fields, unique, ordered: m.ordered && !!unique, done: false },
    };
  }

  private projectExpr(m: Model): { stages: Stage[]; model: Model } {
    const spec: Record<string, unknown> = {};
    const fields: Record<string, Field> = {};
    const keep = m.unique ?? [];
    for (const k of keep) {
      spec[k] = 1;
      fields[k] = m.fields[k];
    }
    if (!keep.includes('_id') && !keep.includes('objectId')) spec._id = 0;
    const n = this.r.int(1, 3);
    for (let i = 0; i < n; i++) {
      const { name, expr, kind } = this.computed(m);
      spec[name] = expr;
      fields[name] = { kind, optional: true };
    }
    if (m.fields.meta && this.r.chance(0.3)) {
      spec['meta.score'] = 1;
      fields.meta = { kind: 'object', optional: true, sub: { score: 'number' } };
    }
    return {
      stages: [{ $project: spec }],
      model: { fields, unique: m.unique, ordered: m.ordered, done: false },
    };
  }

  private computed(m: Model): { name: string; expr: unknown; kind: Kind } {
    const kind = this.r.pick<Kind>(['number', 'string', 'bool', 'date']);
    const name = this.fresh(kind.slice(0, 1));
    // A bare number or boolean in $project is an inclusion flag, not a value.
    const literal = (v: unknown) =>
      typeof v === 'number' || typeof v === 'boolean' ? { $literal: v } : v;
    if (kind === 'number') return { name, expr: literal(this.num(m, 2)), kind };
    if (kind === 'string') return { name, expr: this.str(m, 2), kind };
    if (kind === 'date' && this.fieldsOf(m, 'date').some((f) => !m.fields[f].optional)) {
      return { name, expr: this.date(m), kind };
    }
    return { name, expr: literal(this.bool(m, 2)), kind: 'bool' };
  }

  private addFields(m: Model): { stages: Stage[]; model: Model } {
    const out = clone(m);
    const spec: Record<string, unknown> = {};
    const n = this.r.int(1, 3);
    for (let i = 0; i < n; i++) {
      const { name, expr, kind } = this.computed(m);
      spec[name] = expr;
      out.fields[name] = { kind, optional: true };
    }
    if (m.fields.meta?.kind === 'object' && this.r.chance(0.3)) {
      spec['meta.extra'] = this.num(m, 1);
      out.fields.meta = {
        ...m.fields.meta,
        sub: { ...(m.fields.meta.sub ?? {}), extra: 'number' },
      };
    }
    return { stages: [{ [this.r.pick(['$addFields', '$set'])]: spec }], model: out };
  }

  private unset(m: Model): { stages: Stage[]; model: Model } | undefined {
    const names = Object.keys(m.fields).filter((k) => k !== '_id' && !(m.unique ?? []).includes(k));
    const drop = this.r.some(names, 2);
    if (!drop.length) return undefined;
    const out = clone(m);
    for (const k of drop) delete out.fields[k];
    return {
      stages: [{ $unset: drop.length === 1 && this.r.chance(0.5) ? drop[0] : drop }],
      model: out,
    };
  }

  private unwind(m: Model): { stages: Stage[]; model: Model } | undefined {
    const arrays = this.fieldsOf(m, 'array').filter((f) => f === 'tags');
    if (!arrays.length) return undefined;
    const path = arrays[0];
    const out = clone(m);
    out.fields[path] = { kind: 'string', optional: true };
    const spec: Record<string, unknown> = { path: `$${path}` };
    if (this.has('unwind') && this.r.chance(0.5)) spec.preserveNullAndEmptyArrays = true;
    let idx: string | undefined;
    if (this.has('unwind') && this.r.chance(0.5)) {
      idx = this.fresh('idx');
      spec.includeArrayIndex = idx;
      out.fields[idx] = { kind: 'number', optional: true };
    }
    // Tags are distinct within an order: (row key, tag) tells the unwound rows apart.
    out.unique = m.unique ? [...m.unique, path] : undefined;
    return {
      stages: [
        { $unwind: Object.keys(spec).length === 1 && this.r.chance(0.5) ? `$${path}` : spec },
      ],
      model: out,
    };
  }

  private lookup(m: Model): { stages: Stage[]; model: Model } | undefined {
    if (!m.fields.customer || m.fields.customer.kind !== 'pointer') return undefined;
    const as = this.fresh('cust');
    const out = clone(m);
    const stages: Stage[] = [
      { $lookup: { from: this.joinClass, localField: 'customer', foreignField: 'objectId', as } },
    ];
    out.fields[as] = { kind: 'array', optional: false };
    if (this.r.chance(0.7)) {
      const preserve = this.r.chance(0.5);
      stages.push({
        $unwind: preserve ? { path: `$${as}`, preserveNullAndEmptyArrays: true } : `$${as}`,
      });
      out.fields[as] = {
        kind: 'object',
        optional: preserve,
        sub: {
          name: 'string',
          tier: 'string',
          city: 'string',
          lifetimeValue: 'number',
          tenantId: 'string',
        },
      };
      if (this.r.chance(0.6)) {
        const sub = this.r.pick(['name', 'tier', 'city', 'lifetimeValue', 'tenantId']);
        const name = this.fresh('c_');
        stages.push({ $addFields: { [name]: `$${as}.${sub}` } });
        out.fields[name] = { kind: sub === 'lifetimeValue' ? 'number' : 'string', optional: true };
      }
    }
    return { stages, model: out };
  }

  /** `$lookup` with let/pipeline: correlated on the pointer, or on a number of the order. */
  private lookupPipeline(m: Model): { stages: Stage[]; model: Model } | undefined {
    const as = this.fresh('cl');
    const out = clone(m);
    const nums = this.fieldsOf(m, 'number').filter((f) => !m.fields[f].optional);
    let stage: Stage;
    if (m.fields.customer?.kind === 'pointer' && (this.r.chance(0.6) || !nums.length)) {
      const pipeline: Stage[] = [{ $match: { $expr: { $eq: ['$objectId', '$$cid'] } } }];
      if (this.r.chance(0.5)) pipeline.push({ $project: { _id: 0, name: 1, tier: 1 } });
      else
        pipeline.push(
          { $addFields: { big: { $gt: ['$lifetimeValue', 2500] } } },
          { $project: { _id: 0, tier: 1, big: 1 } },
        );
      stage = { $lookup: { from: this.joinClass, let: { cid: '$customer' }, pipeline, as } };
    } else if (nums.length) {
      const f = this.r.pick(nums);
      stage = {
        $lookup: {
          from: this.joinClass,
          let: { q: `$${f}` },
          pipeline: [
            {
              $match: {
                $expr: {
                  $gte: ['$lifetimeValue', { $multiply: ['$$q', this.r.pick([100, 400, 900])] }],
                },
              },
            },
            { $group: { _id: '$tier', n: { $sum: 1 } } },
            { $sort: { _id: 1 } },
          ],
          as,
        },
      };
    } else return undefined;
    out.fields[as] = { kind: 'array', optional: false };
    return { stages: [stage], model: out };
  }

  private sortByCount(m: Model): { stages: Stage[]; model: Model } | undefined {
    const strs = this.fieldsOf(m, 'string');
    if (!strs.length) return undefined;
    const arg =
      this.has('expressions') && this.r.chance(0.3) ? this.str(m, 1) : `$${this.r.pick(strs)}`;
    return {
      stages: [{ $sortByCount: arg }],
      model: {
        fields: {
          _id: { kind: 'string', optional: true },
          count: { kind: 'number', optional: false },
        },
        unique: ['_id'],
        ordered: false,
        done: false,
      },
    };
  }

  private bucket(m: Model): { stages: Stage[]; model: Model } | undefined {
    const nums = this.fieldsOf(m, 'number');
    if (!nums.length) return undefined;
    // Inner boundaries end in .125, a fraction no value here has: mingo 7 puts a value equal to an
    // inner boundary in the bucket below it (MongoDB: [lower, upper)).
    const bounds = [0, this.r.int(1, 40), this.r.int(41, 80), this.r.int(81, 200)].map((b, i) =>
      i ? b + 0.125 : b,
    );
    const output: Record<string, unknown> = { count: { $sum: 1 } };
    const fields: Record<string, Field> = {
      _id: { kind: 'number', optional: false },
      count: { kind: 'number', optional: false },
    };
    if (this.r.chance(0.5)) {
      output.total = { $sum: `$${this.r.pick(nums)}` };
      fields.total = { kind: 'number', optional: false };
    }
    return {
      // mingo 7 emits empty buckets, MongoDB does not: the $match keeps the comparison about real ones.
      stages: [
        {
          $bucket: {
            groupBy: `$${this.r.pick(nums)}`,
            boundaries: bounds,
            // A number below the boundaries: the _id stays a number for the stages after it.
            default: -1,
            output,
          },
        },
        { $match: { count: { $gt: 0 } } },
      ],
      model: { fields, unique: ['_id'], ordered: false, done: false },
    };
  }

  private bucketAuto(m: Model): { stages: Stage[]; model: Model } | undefined {
    const nums = this.fieldsOf(m, 'number');
    const strs = this.fieldsOf(m, 'string');
    if (!nums.length && !strs.length) return undefined;
    const key = this.r.pick([...nums, ...strs]);
    const kind = m.fields[key].kind;
    const fields: Record<string, Field> = {
      _id: { kind: 'object', optional: false, sub: { min: kind, max: kind } },
      count: { kind: 'number', optional: false },
    };
    const spec: Record<string, unknown> = { groupBy: `$${key}`, buckets: this.r.int(1, 6) };
    if (this.r.chance(0.6)) {
      const output: Record<string, unknown> = { count: { $sum: 1 } };
      if (nums.length) {
        output.total = { $sum: `$${this.r.pick(nums)}` };
        fields.total = { kind: 'number', optional: false };
      }
      spec.output = output;
    }
    return {
      // mingo 7 emits one empty bucket for no rows, MongoDB none: the $match drops it.
      stages: [{ $bucketAuto: spec }, { $match: { count: { $gt: 0 } } }],
      model: { fields, unique: ['_id'], ordered: true, done: false },
    };
  }

  private replaceRoot(m: Model): { stages: Stage[]; model: Model } {
    const doc: Record<string, unknown> = {};
    const fields: Record<string, Field> = {};
    for (const k of m.unique ?? []) {
      const name = `k_${k.replace(/^_/, '')}`;
      doc[name] = `$${k}`;
      fields[name] = m.fields[k];
    }
    const { name, expr, kind } = this.computed(m);
    doc[name] = expr;
    fields[name] = { kind, optional: true };
    const unique = m.unique?.map((k) => `k_${k.replace(/^_/, '')}`);
    return {
      stages: [this.r.chance(0.5) ? { $replaceRoot: { newRoot: doc } } : { $replaceWith: doc }],
      model: { fields, unique, ordered: m.ordered && !!unique, done: false },
    };
  }

  private facet(m: Model): { stages: Stage[]; model: Model } {
    const spec: Record<string, unknown> = {};
    const fields: Record<string, Field> = {};
    const inner = new PipelineGenerator(
      this.r,
      this.families.filter((f) => f !== 'facet'),
      this.joinClass,
    );
    for (const branch of ['a', 'b'].slice(0, this.r.int(1, 2))) {
      const { pipeline, model } = inner.pipeline(3, m);
      // A branch's rows are compared in order: end on a total order, or on a count.
      if (!model.done && !model.ordered) {
        const sort = inner.sortSpec(model, 1);
        pipeline.push(sort ? { $sort: sort } : { $count: 'n' });
      }
      spec[branch] = pipeline;
      fields[branch] = { kind: 'array', optional: false };
    }
    return { stages: [{ $facet: spec }], model: { fields, unique: [], ordered: true, done: true } };
  }

  private window(m: Model): { stages: Stage[]; model: Model } | undefined {
    if (this.r.chance(0.4)) return this.ranking(m) ?? this.running(m);
    return this.running(m);
  }

  /**
   * Ranks by one key that may tie ($rank and $denseRank do not depend on the order of ties), often
   * followed by the top-N $match written after it: equality and <= with integers (which the
   * PostgreSQL path compares as bigint) and < with a fraction (compared as double precision).
   */
  private ranking(m: Model): { stages: Stage[]; model: Model } | undefined {
    const keys = this.fieldsOf(m, 'number', 'string').filter(
      (f) => f !== 'objectId' && !m.fields[f].optional,
    );
    if (!keys.length) return undefined;
    const strs = this.fieldsOf(m, 'string').filter((f) => f !== 'objectId');
    const spec: Record<string, unknown> = {
      sortBy: { [this.r.pick(keys)]: this.r.chance(0.5) ? 1 : -1 },
    };
    if (strs.length && this.r.chance(0.7)) spec.partitionBy = `$${this.r.pick(strs)}`;
    const out = clone(m);
    const rank = this.fresh('rank');
    const output: Record<string, unknown> = { [rank]: { $rank: {} } };
    out.fields[rank] = { kind: 'number', optional: false };
    if (this.r.chance(0.5)) {
      const dense = this.fresh('dense');
      output[dense] = { $denseRank: {} };
      out.fields[dense] = { kind: 'number', optional: false };
    }
    spec.output = output;
    // Ties leave the order of the rows unspecified: only the set of rows is compared.
    out.ordered = false;
    const stages: Stage[] = [{ $setWindowFields: spec }];
    const roll = this.r.int(0, 3);
    if (roll === 0) stages.push({ $match: { [rank]: 1 } });
    else if (roll === 1) stages.push({ $match: { [rank]: { $lte: this.r.int(1, 4) } } });
    else if (roll === 2) stages.push({ $match: { [rank]: { $lt: this.r.pick([1.5, 2.5]) } } });
    return { stages, model: out };
  }

  /** Running and whole-partition folds, row numbers and shifts over a total order. */
  private running(m: Model): { stages: Stage[]; model: Model } | undefined {
    const nums = this.fieldsOf(m, 'number').filter((f) => !m.fields[f].optional);
    const sort = this.sortSpec(m, 1);
    if (!nums.length || !sort) return undefined;
    const strs = this.fieldsOf(m, 'string').filter((f) => f !== 'objectId');
    const spec: Record<string, unknown> = { sortBy: sort };
    if (strs.length && this.r.chance(0.7)) spec.partitionBy = `$${this.r.pick(strs)}`;
    const out = clone(m);
    const output: Record<string, unknown> = {};
    const v = `$${this.r.pick(nums)}`;
    const add = (name: string, value: unknown) => {
      output[name] = value;
      out.fields[name] = { kind: 'number', optional: true };
    };
    add(this.fresh('run'), { $sum: v, window: { documents: ['unbounded', 'current'] } });
    if (this.r.chance(0.5)) add(this.fresh('avg'), { $avg: v, window: { documents: [-1, 1] } });
    if (this.r.chance(0.5)) add(this.fresh('num'), { $documentNumber: {} });
    if (this.r.chance(0.5)) add(this.fresh('tot'), { $max: v });
    if (this.r.chance(0.5)) add(this.fresh('prev'), { $shift: { output: v, by: -1, default: 0 } });
    spec.output = output;
    // Rows come out in sortBy order; with partitions MongoDB sorts by partition first and mingo
    // keeps the partitions in the order it met them, so only the set of rows is compared then.
    out.ordered = !spec.partitionBy;
    return { stages: [{ $setWindowFields: spec }], model: out };
  }

  // ---- expressions ------------------------------------------------------------------------

  num(m: Model, depth: number): unknown {
    const nums = this.fieldsOf(m, 'number');
    const leaf = (): unknown =>
      nums.length && this.r.chance(0.7)
        ? { $ifNull: [`$${this.r.pick(nums)}`, this.r.int(0, 5)] }
        : this.r.int(-5, 50);
    if (depth <= 0 || !this.has('expressions')) {
      if (!nums.length) return 1;
      const f = this.r.pick(nums);
      // mingo orders null after numbers in comparisons (MongoDB: before): missing values get a default.
      return m.fields[f].optional ? { $ifNull: [`$${f}`, 0] } : `$${f}`;
    }
    const d = depth - 1;
    const dates = this.fieldsOf(m, 'date').filter((f) => !m.fields[f].optional);
    const strs = this.fieldsOf(m, 'string');
    switch (this.r.int(0, 13)) {
      case 0:
        return { $add: [this.num(m, d), leaf()] };
      case 1:
        return { $subtract: [leaf(), this.num(m, d)] };
      case 2:
        return { $multiply: [leaf(), this.r.int(1, 4)] };
      case 3:
        return { $divide: [this.num(m, d), this.r.pick([2, 4, 8])] };
      case 4:
        // Half to even at 0 places: mingo rounds 0.75 to one place as 0.7 (MongoDB: 0.8).
        return { $round: [{ $divide: [leaf(), 4] }, 0] };
      case 5:
        // mingo takes $trunc only as [value, places].
        return this.r.chance(0.25)
          ? { $trunc: [{ $subtract: [leaf(), 7.5] }, 0] }
          : { [this.r.pick(['$abs', '$floor', '$ceil'])]: { $subtract: [leaf(), 7.5] } };
      case 6:
        return { $cond: [this.bool(m, d), leaf(), this.num(m, d)] };
      case 7:
        return dates.length
          ? {
              [this.r.pick([
                '$month',
                '$dayOfWeek',
                '$hour',
                '$dayOfMonth',
                '$isoWeek',
                '$minute',
              ])]: { date: `$${this.r.pick(dates)}`, timezone: this.r.pick(ZONES) },
            }
          : leaf();
      case 8:
        return dates.length ? { $year: `$${this.r.pick(dates)}` } : leaf();
      case 9:
        return strs.length ? { $strLenCP: { $ifNull: [`$${this.r.pick(strs)}`, ''] } } : leaf();
      case 10:
        return m.fields.tags?.kind === 'array' ? { $size: { $ifNull: ['$tags', []] } } : leaf();
      case 11:
        return m.fields.meta?.kind === 'object' ? { $ifNull: ['$meta.score', -1] } : leaf();
      case 12:
        return dates.length > 0
          ? {
              $dateDiff: {
                startDate: `$${this.r.pick(dates)}`,
                endDate: { __type: 'Date', iso: '2024-12-31T12:00:00.000Z' },
                unit: this.r.pick(['day', 'month', 'hour', 'year']),
              },
            }
          : leaf();
      default:
        return { $mod: [{ $ifNull: [this.num(m, d), 0] }, this.r.pick([3, 7])] };
    }
  }

  str(m: Model, depth: number): unknown {
    const strs = this.fieldsOf(m, 'string');
    const leaf = (): unknown =>
      strs.length && this.r.chance(0.7)
        ? `$${this.r.pick(strs)}`
        : this.r.pick(['x', 'Paid', 'gold']);
    if (depth <= 0 || !this.has('expressions')) return leaf();
    const d = depth - 1;
    const safe = () => ({ $ifNull: [this.str(m, d), 'none'] });
    const dates = this.fieldsOf(m, 'date').filter((f) => !m.fields[f].optional);
    switch (this.r.int(0, 8)) {
      case 0:
        return { $concat: [leaf(), '-', safe()] };
      case 1:
        return { [this.r.pick(['$toUpper', '$toLower'])]: safe() };
      case 2:
        return { $substrCP: [safe(), this.r.int(0, 2), this.r.int(1, 4)] };
      case 3:
        return dates.length
          ? {
              $dateToString: {
                date: `$${this.r.pick(dates)}`,
                format: this.r.pick([
                  '%Y-%m-%d',
                  '%Y-%m',
                  '%H:%M',
                  '%Y-%m-%dT%H:%M:%S.%LZ',
                  'week %V of %G',
                ]),
                timezone: this.r.pick(ZONES),
              },
            }
          : leaf();
      case 4:
        return { $cond: { if: this.bool(m, d), then: leaf(), else: 'other' } };
      case 5:
        return {
          $switch: {
            branches: [
              { case: this.bool(m, d), then: 'first' },
              { case: this.bool(m, d), then: leaf() },
            ],
            default: 'none',
          },
        };
      case 6:
        return { $toString: { $ifNull: [this.num(m, d), 0] } };
      case 7:
        return { $trim: { input: { $concat: ['  ', safe(), ' '] } } };
      default:
        return { $ifNull: [leaf(), 'missing'] };
    }
  }

  bool(m: Model, depth: number): unknown {
    const d = Math.max(depth - 1, 0);
    const strs = this.fieldsOf(m, 'string');
    switch (this.r.int(0, 7)) {
      case 0:
        return {
          [this.r.pick(['$gt', '$gte', '$lt', '$lte'])]: [this.num(m, d), this.r.int(0, 60)],
        };
      case 1:
        return strs.length
          ? {
              [this.r.pick(['$eq', '$ne'])]: [
                `$${this.r.pick(strs)}`,
                this.r.pick([...this.stringValues(this.r.pick(strs)), null]),
              ],
            }
          : true;
      case 2:
        return depth > 0
          ? { [this.r.pick(['$and', '$or'])]: [this.bool(m, d), this.bool(m, d)] }
          : false;
      case 3:
        return depth > 0 ? { $not: [this.bool(m, d)] } : true;
      case 4:
        return m.fields.tags?.kind === 'array'
          ? { $in: [this.r.pick(TAGS), { $ifNull: ['$tags', []] }] }
          : { $eq: [1, 1] };
      case 5:
        return strs.length
          ? {
              $regexMatch: {
                input: `$${this.r.pick(strs)}`,
                regex: this.r.pick(['^p', 'e', 'd$']),
                ...(this.r.chance(0.3) ? { options: 'i' } : {}),
              },
            }
          : false;
      case 6:
        return { [this.r.pick(['$gt', '$lt'])]: [this.num(m, d), this.num(m, d)] };
      default:
        return { $isArray: m.fields.tags ? '$tags' : [1] };
    }
  }

  date(m: Model): unknown {
    const dates = this.fieldsOf(m, 'date').filter((f) => !m.fields[f].optional);
    const f = `$${this.r.pick(dates)}`;
    if (this.r.chance(0.5)) {
      // mingo truncates in the UTC day whenever the local date differs from it: zones only for hours.
      const unit = this.r.pick(['day', 'month', 'week', 'hour', 'year', 'quarter']);
      return {
        $dateTrunc: {
          date: f,
          unit,
          ...(unit === 'hour' ? { timezone: this.r.pick(WEST_ZONES) } : {}),
          ...(unit === 'week' ? { startOfWeek: this.r.pick(['monday', 'sunday']) } : {}),
        },
      };
    }
    const unit = this.r.pick(['day', 'hour', 'month', 'week']);
    return {
      $dateAdd: {
        startDate: f,
        unit,
        amount: this.r.int(-3, 3),
        timezone: this.r.pick(unit === 'hour' ? ZONES : FIXED_ZONES),
      },
    };
  }
}
