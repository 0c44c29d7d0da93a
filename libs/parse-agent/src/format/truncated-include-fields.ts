/**
 * The `truncated_include_fields` value: which fields of each included pointer were left out by
 * keys-on-include auto-projection. Undefined when nothing was narrowed, so envelopes omit the key.
 */
export function truncatedIncludePayload(
  fields: Record<string, string[]> | null | undefined,
): Record<string, string[]> | undefined {
  if (!fields) return undefined;
  const entries = Object.entries(fields).filter(([, dropped]) => Array.isArray(dropped));
  if (entries.length === 0) return undefined;
  return Object.fromEntries(entries.map(([pointer, dropped]) => [pointer, [...dropped]]));
}
