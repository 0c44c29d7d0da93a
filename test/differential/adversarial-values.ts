/**
 * Values chosen to be mistaken for something else: strings holding `$`, pointer-like "Class$id"
 * text, type tags and JSON, unicode and control characters; extreme, negative and fractional
 * numbers; dates far from now; objects that look like Parse typed values or pointers; arrays
 * mixing all of these. Generated from a seeded PRNG, so a run is replayable.
 *
 * Left out on purpose: NUL (U+0000), which PostgreSQL text and jsonb cannot store (Parse refuses
 * the row); object keys with `$` or `.` and the keys `__proto__`/`constructor`, which Parse Server
 * refuses in request data.
 */
import type { SeededRandom } from './seeded-random';

export interface ValueContext {
  /** A class every identity may read (pointers into it are real pointers). */
  visibleClass: string;
  visibleIds: readonly string[];
  /** A class hidden from every agent (pointers into it must never name their row). */
  hiddenClass: string;
  hiddenIds: readonly string[];
}

const WORDS = ['Total', 'USD', 'Plan', 'Pro', 'a', 'price', 'Order', 'note'];

/** Text that looks like something other than text. */
function trickyStrings(ctx: ValueContext, rng: SeededRandom): string[] {
  const visibleId = rng.pick(ctx.visibleIds);
  const hiddenId = rng.pick(ctx.hiddenIds);
  return [
    'Total$100',
    'USD$5',
    'Plan$Pro',
    `${ctx.hiddenClass}$${hiddenId}`,
    `${ctx.visibleClass}$${visibleId}`,
    `_User$abc`,
    `_Role$${hiddenId}`,
    '$',
    '$$',
    '$total',
    'a$',
    '$$ROOT',
    visibleId,
    'AbCdEf1234',
    '__type',
    'className',
    'objectId',
    '{"__type":"Pointer","className":"_User","objectId":"x"}',
    '{"__redacted":true}',
    '',
    ' ',
    'naïve café ☃ 𝄞 中文 עברית العربية',
    'right\u202eto\u202cleft',
    'zero\u200bwidth\u200d',
    'bell\u0007esc\u001b[31mred\u001b[0m',
    'tab\tnew\nline\r\nreturn\rend',
    'quote " comma , pipe | back\\slash',
    '=1+2',
    '-3',
    '@SUM(A1)',
    '\u00a0nbsp\u00a0',
    '\ufeffbom',
    'emoji 👩‍👩‍👧‍👦 🇺🇳',
    'x'.repeat(rng.int(200, 600)),
  ];
}

export function adversarialString(ctx: ValueContext, rng: SeededRandom): string {
  if (rng.chance(0.25)) {
    // A random mix: words, `$`, digits and odd characters glued together.
    const parts = Array.from({ length: rng.int(1, 4) }, () =>
      rng.pick([
        rng.pick(WORDS),
        '$',
        String(rng.int(0, 999)),
        rng.pick(['\u0001', '\u007f', '\u0085', '\u2028', 'é', '"', ',', '\n']),
      ]),
    );
    return parts.join('');
  }
  return rng.pick(trickyStrings(ctx, rng));
}

export function adversarialNumber(rng: SeededRandom): number {
  return rng.pick([
    0,
    -1,
    1,
    42,
    -42,
    0.1 + 0.2,
    -0.5,
    1e-300,
    -1e-300,
    1.5e300,
    -1.5e300,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    2 ** 53 + 2,
    123456789.123456,
    Number.EPSILON,
    rng.int(-1000, 1000) / 8,
  ]);
}

export function adversarialDate(rng: SeededRandom): string {
  const ms = rng.pick([
    Date.UTC(1900, 0, 1),
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    Date.UTC(1970, 0, 1),
    Date.UTC(2000, 1, 29, 12),
    Date.UTC(2038, 0, 19, 3, 14, 8),
    Date.UTC(2199, 11, 31, 23, 59, 59, 999),
    Date.UTC(2024, rng.int(0, 11), rng.int(1, 28), rng.int(0, 23), rng.int(0, 59), rng.int(0, 59)),
  ]);
  return new Date(ms).toISOString();
}

/** Object content that looks like Parse typed values, pointers or redaction markers. */
function lookalikeObject(ctx: ValueContext, rng: SeededRandom): Record<string, unknown> {
  const hiddenId = rng.pick(ctx.hiddenIds);
  const visibleId = rng.pick(ctx.visibleIds);
  return rng.pick<Record<string, unknown>>([
    { __type: 'Date', iso: adversarialDate(rng) },
    { __type: 'Pointer', className: ctx.visibleClass, objectId: visibleId },
    { __type: 'Pointer', className: ctx.hiddenClass, objectId: hiddenId },
    { __type: 'Pointer', className: '_User', objectId: 'abc' },
    { className: ctx.hiddenClass, objectId: hiddenId },
    { className: 'Total', __redacted: true },
    { className: ctx.hiddenClass, note: 'plain data naming a class' },
    { __type: 'GeoPoint', latitude: 40.5, longitude: -73.25 },
    { __type: 'Bytes', base64: 'aGVsbG8=' },
    { __type: 'Unknown', value: 'x$y' },
    { __type: 'Relation', className: ctx.visibleClass },
    { objectId: visibleId, createdAt: adversarialDate(rng) },
  ]);
}

export function adversarialObject(
  ctx: ValueContext,
  rng: SeededRandom,
  depth = 0,
): Record<string, unknown> {
  // At the top of an Object column Parse would read a type tag as the column's type: lookalikes
  // go one level down, where Parse stores them as plain content.
  if (depth > 0 && rng.chance(0.3)) return lookalikeObject(ctx, rng);
  const keys = [
    'label',
    'className',
    'objectId',
    '__type',
    'iso',
    'naïve',
    'ключ',
    'with space',
    'ACL',
    'sessionToken',
    'nested',
    'list',
    'n',
    'flag',
  ];
  const out: Record<string, unknown> = {};
  for (const key of rng.some(keys, 5)) {
    if (key === '__type' && depth === 0) continue;
    out[key] = adversarialLeaf(ctx, rng, depth + 1);
  }
  return out;
}

export function adversarialArray(ctx: ValueContext, rng: SeededRandom, depth = 0): unknown[] {
  return Array.from({ length: rng.int(0, 4) }, () => adversarialLeaf(ctx, rng, depth + 1));
}

function adversarialLeaf(ctx: ValueContext, rng: SeededRandom, depth: number): unknown {
  const kind = rng.int(0, depth >= 3 ? 4 : 6);
  switch (kind) {
    case 0:
      return adversarialString(ctx, rng);
    case 1:
      return adversarialNumber(rng);
    case 2:
      return rng.chance(0.5);
    case 3:
      return null;
    case 4:
      return lookalikeObject(ctx, rng);
    case 5:
      return adversarialObject(ctx, rng, depth);
    default:
      return adversarialArray(ctx, rng, depth);
  }
}
