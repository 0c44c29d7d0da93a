/**
 * JSON parsing with a nesting cap, checked on the text before JSON.parse runs, so a deeply nested
 * body costs one linear scan and never a parse or a recursive walk.
 */
export type BoundedJsonResult = { ok: true; value: unknown } | { ok: false };

/** Deepest `{`/`[` nesting of a JSON text, ignoring brackets inside strings; stops early past `limit`. */
export function jsonNestingDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return max;
}

/** Parses `text` (empty means `{}`); invalid JSON or nesting deeper than `maxDepth` fails. */
export function parseBoundedJson(text: string, maxDepth: number): BoundedJsonResult {
  const source = text.length === 0 ? '{}' : text;
  if (jsonNestingDepth(source, maxDepth) > maxDepth) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(source) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Nesting depth of an already-parsed value (for bodies another parser read first); iterative. */
export function valueNestingDepth(value: unknown, limit = Infinity): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) {
      max = depth;
      if (max > limit) return max;
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return max;
}
