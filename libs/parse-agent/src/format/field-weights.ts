import { isPlainRecord } from '../core/plain-object';

/** Rows inspected to find heavy fields; a handful is representative and keeps the check cheap. */
export const WEIGHT_SAMPLE_SIZE = 5;

/** Never suggested for removal: the model needs them to identify a row and fetch it again. */
export const ALWAYS_KEEP_FIELDS: readonly string[] = ['objectId', 'createdAt', 'updatedAt'];

export interface FieldWeight {
  field: string;
  /** Compact-JSON bytes of this field summed over the sampled rows. */
  bytes: number;
}

/** The first rows that are plain objects, up to the sample size. */
export function sampleRecords(rows: readonly unknown[]): Array<Record<string, unknown>> {
  const sample: Array<Record<string, unknown>> = [];
  for (const row of rows) {
    if (sample.length === WEIGHT_SAMPLE_SIZE) break;
    if (isPlainRecord(row)) sample.push(row);
  }
  return sample;
}

/** Field weights over the sample, heaviest first; equal weights keep first-seen order. */
export function weighFields(sample: ReadonlyArray<Record<string, unknown>>): FieldWeight[] {
  const totals = new Map<string, number>();
  for (const row of sample) {
    for (const [field, value] of Object.entries(row)) {
      totals.set(field, (totals.get(field) ?? 0) + jsonBytes(value));
    }
  }
  return [...totals].map(([field, bytes]) => ({ field, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** The heaviest field that may be dropped (identity fields excluded), if any. */
export function heaviestDroppableField(weights: readonly FieldWeight[]): string | undefined {
  return weights.find((weight) => !ALWAYS_KEEP_FIELDS.includes(weight.field))?.field;
}

/** Human size: `812 B`, `97.7 KB`, `4.2 MB`. */
export function humanBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Values that cannot be serialised (cycles, BigInt) weigh nothing rather than break the diagnosis. */
function jsonBytes(value: unknown): number {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  } catch {
    return 0;
  }
}
