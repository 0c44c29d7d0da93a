/** Steps of a quantized score: two decimals. */
const STEP = 0.01;

/**
 * A score as a non-admin identity sees it: rounded to two decimals. Exact cosines of crafted
 * queries could otherwise be used to infer what a document says word by word.
 */
export function quantizeScore(score: number): number {
  // `|| 0` turns -0 into 0.
  return Number((Math.round(score / STEP) * STEP).toFixed(2)) || 0;
}

/** Cosine of two vectors of the same length (0 when either is all zeros). */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
