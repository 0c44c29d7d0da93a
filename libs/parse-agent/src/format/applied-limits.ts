/** A limit the tool applied instead of the one asked for (mongodb-mcp-server's `appliedLimits`). */
export interface AppliedLimit {
  requested: number;
  applied: number;
  reason: string;
}

/**
 * Clamps a requested count to its maximum and, when it had to, says so: a result cut short
 * without a word reads as "that is all there is".
 */
export function clampLimit(
  name: string,
  requested: number | undefined,
  fallback: number,
  max: number,
): { value: number; applied?: Record<string, AppliedLimit> } {
  const value = Math.min(requested ?? fallback, max);
  if (requested === undefined || requested <= max) return { value };
  return {
    value,
    applied: {
      [name]: { requested, applied: max, reason: `${name} is capped at ${max} per call` },
    },
  };
}
