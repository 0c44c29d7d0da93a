/**
 * Result data that already knows its compact JSON text: the formatter measures rows against the
 * byte budget with the same text the MCP layer would send, so that layer reuses it instead of
 * serializing the rows again. Any copy of the object (a spread adding a key) drops the text, and
 * the MCP layer then serializes the copy itself, so a stale text can never be sent.
 */
const JSON_TEXT = Symbol('parse-agent.json-text');

export function withJsonText<T extends object>(value: T, json: string): T {
  Object.defineProperty(value, JSON_TEXT, { value: json, enumerable: false });
  return Object.freeze(value);
}

export function jsonTextOf(value: unknown): string | undefined {
  return value !== null && typeof value === 'object'
    ? ((value as Record<symbol, unknown>)[JSON_TEXT] as string | undefined)
    : undefined;
}
