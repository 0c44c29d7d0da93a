import { hiddenCharacters } from '../core/hidden-characters';
import { unwrapUntrusted } from '../core/untrusted-data';

/**
 * How `terminalSafe` treats its text:
 * - `line`: one line; every hidden character is escaped, newlines and tabs included;
 * - `multiline`: newlines and tabs stay, everything else hidden is escaped;
 * - `json`: for text that is already JSON (`JSON.stringify` output, whose own newlines are
 *   formatting): escapes are JSON's `\uXXXX`, so the text still parses to the same value.
 */
export type TerminalTextMode = 'line' | 'multiline' | 'json';

/**
 * Text from data or a model, made safe to print on the operator's terminal. Stored rows, model
 * answers and provider errors may hold escape sequences (screen clears, OSC 52 clipboard writes,
 * title changes), BEL, C1 controls, bidirectional overrides or zero-width characters; printed raw,
 * they act on the terminal or make the text read differently from what it holds. Each one is
 * shown as a visible escape instead: `\x1b`, `\x9b`, `\u202e`, `\u{e0041}`. Every CLI path that
 * prints such text goes through here.
 */
export function terminalSafe(text: string, mode: TerminalTextMode = 'line'): string {
  return text.replace(hiddenCharacters(), (char) => {
    if (mode !== 'line' && (char === '\n' || char === '\t')) return char;
    const code = char.codePointAt(0) ?? 0;
    if (mode === 'json') {
      // One escape per UTF-16 unit: a tag character becomes its surrogate pair, as JSON spells it.
      let escaped = '';
      for (let i = 0; i < char.length; i++) escaped += `\\u${hex(char.charCodeAt(i), 4)}`;
      return escaped;
    }
    if (code < 0x100) return `\\x${hex(code, 2)}`;
    if (code <= 0xffff) return `\\u${hex(code, 4)}`;
    return `\\u{${code.toString(16)}}`;
  });
}

/** JSON for the terminal: `JSON.stringify(value, null, 2)` with every hidden character escaped. */
export function terminalJson(value: unknown): string {
  return terminalSafe(JSON.stringify(value, null, 2) ?? 'undefined', 'json');
}

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

/**
 * The value with every untrusted-data block in its strings replaced by its content (see
 * `unwrapUntrusted`): the notice and random tags tell a model what is data, and only clutter a
 * person's terminal. Escape sequences inside stay for `terminalSafe` to show.
 */
export function unwrapDeep<T>(value: T): T {
  if (typeof value === 'string') return unwrapUntrusted(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => unwrapDeep(item)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = unwrapDeep(item);
    return out as T;
  }
  return value;
}

/** The text as a person sees it on `output`: unwrapped on a terminal, as it is otherwise. */
export function forTerminal(output: { isTTY?: boolean }, text: string): string {
  return output.isTTY ? unwrapUntrusted(text) : text;
}
