/**
 * Result data that already knows its compact JSON text: the formatter measures rows against the
 * byte budget with the same text the MCP layer would send, so that layer reuses it instead of
 * serializing the rows again. Any copy of the object (a spread adding a key) drops the text, and
 * the MCP layer then serializes the copy itself, so a stale text can never be sent.
 */
const JSON_TEXT = Symbol('parse-agent.json-text');

/** A value's compact JSON text and its length in UTF-8 bytes. */
export interface SerializedJson {
  json: string;
  bytes: number;
}

/** `bytes` is the UTF-8 length of `json`, which the formatter counted while building it. */
export function withJsonText<T extends object>(value: T, json: string, bytes: number): T {
  const serialized: { text?: SerializedJson } = { text: { json, bytes } };
  Object.defineProperty(value, JSON_TEXT, { value: serialized, enumerable: false });
  return Object.freeze(value);
}

function holder(value: unknown): { text?: SerializedJson } | undefined {
  return value !== null && typeof value === 'object'
    ? ((value as Record<symbol, unknown>)[JSON_TEXT] as { text?: SerializedJson } | undefined)
    : undefined;
}

/** The text the formatter attached, if it is still there. */
export function serializedJsonOf(value: unknown): SerializedJson | undefined {
  return holder(value)?.text;
}

/**
 * The attached text, which the value then lets go of: the MCP layer builds the response from it
 * once, and the value (which hooks and events may keep) no longer holds a copy of every row.
 * Without it, the value is serialized again.
 */
export function takeSerializedJson(value: unknown): SerializedJson | undefined {
  const held = holder(value);
  const text = held?.text;
  if (held) held.text = undefined;
  return text;
}
