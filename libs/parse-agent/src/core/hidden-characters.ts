/**
 * Characters that change what a reader sees without being seen themselves: C0 controls
 * (U+0000-U+001F, ESC and BEL among them), DEL and the C1 controls (U+007F-U+009F, CSI is U+009B),
 * the soft hyphen, bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E,
 * U+200F, U+202A-U+202E, U+2066-U+2069), zero-width and invisible characters (U+180E,
 * U+200B-U+200D, U+2060-U+2064, U+FEFF), the line and paragraph separators (U+2028, U+2029) and
 * the tag characters (U+E0000-U+E007F, invisible ASCII look-alikes a model still reads).
 *
 * One definition for the two places that defend against them: the CLI turns them into visible
 * escapes before a terminal sees them, and schema text drops them before a model does.
 */
const HIDDEN_CHARACTER_CLASS =
  '[\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2064\\u2066-\\u2069\\ufeff\\u{e0000}-\\u{e007f}]';

/** A fresh global matcher for the characters above (a new one per call: `g` regexes keep state). */
export function hiddenCharacters(): RegExp {
  return new RegExp(HIDDEN_CHARACTER_CLASS, 'gu');
}
