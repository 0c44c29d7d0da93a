/** How much of a long text a chat line shows. */
export const PREVIEW = 120;

/** One line of at most `max` characters: whitespace folded, an ellipsis where it was cut. */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}
