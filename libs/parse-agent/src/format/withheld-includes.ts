/** What `withheld_includes` means, said once per result that has it. */
export const WITHHELD_INCLUDES_NOTE =
  'Included objects counted in withheld_includes (per include path) were not expanded: a direct read of their class by this agent does not return them (another tenant, filtered out, soft-deleted, not readable, or deleted). They stay plain pointers ("Class$id"); none of their fields are shown.';

/**
 * The `withheld_includes` entries of a result: per include path, how many pointed-to objects
 * stayed bare pointers because this agent's read of their class does not return them. Empty when
 * every included object was joined, so results without withheld joins carry no such keys.
 */
export function withheldIncludesPayload(
  withheld: Readonly<Record<string, number>> | null | undefined,
): { withheld_includes?: Record<string, number>; withheld_includes_note?: string } {
  if (!withheld) return {};
  const entries = Object.entries(withheld).filter(([, n]) => typeof n === 'number' && n > 0);
  if (!entries.length) return {};
  return {
    withheld_includes: Object.fromEntries(entries),
    withheld_includes_note: WITHHELD_INCLUDES_NOTE,
  };
}
