/**
 * A small seeded PRNG (mulberry32) for the differential suite: the same seed yields the same rows,
 * so a failure found by a large run (DIFF_SEED, DIFF_ITERATIONS) can be replayed exactly.
 */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }

  /** A few distinct items, in a random order. */
  some<T>(items: readonly T[], max = items.length): T[] {
    const pool = [...items];
    const out: T[] = [];
    const n = this.int(0, Math.min(max, pool.length));
    while (out.length < n) out.push(pool.splice(this.int(0, pool.length - 1), 1)[0]);
    return out;
  }
}

/** The seed and size of this run: fixed in CI, larger or other runs behind environment variables. */
export function differentialSettings(): { seed: number; rows: number } {
  const seed = Number(process.env.DIFF_SEED ?? 20240611);
  const rows = Number(process.env.DIFF_ITERATIONS ?? 36);
  if (!Number.isInteger(seed) || !Number.isInteger(rows) || rows < 1) {
    throw new Error('DIFF_SEED and DIFF_ITERATIONS must be integers (DIFF_ITERATIONS >= 1).');
  }
  return { seed, rows };
}
