/**
 * Results carrying their JSON text, so transports need not serialize them again: a tools list,
 * the same for many requests (computed once, reused), or one call's result, whose text was built
 * from pieces the formatter had already serialized (sent once, then dropped).
 */
const PRESERIALIZED = Symbol.for('nestjs-parse-agent.preserialized');

interface Preserialized {
  /** The JSON text, in pieces whose concatenation is the text (see jsonRpcParts). */
  parts: readonly string[] | undefined;
  /** False: the text belongs to one response and is dropped once it has been taken. */
  reusable: boolean;
}

export function withPreserializedJson<T extends object>(value: T): T {
  return attach(value, { parts: [JSON.stringify(value)], reusable: true });
}

/**
 * Like withPreserializedJson, with JSON text the caller already built for `value` (whole or in
 * pieces), for one response: the first jsonRpcParts or stringifyJsonRpc takes the text and the
 * value lets go of it, so promises older than the result (see data/handed-over-rows.ts) do not
 * keep a copy of every row alive after the answer is written. A later stringify of the same
 * value serializes the object itself, which gives the same text.
 */
export function withPreserializedText<T extends object>(
  value: T,
  json: string | readonly string[],
): T {
  return attach(value, { parts: typeof json === 'string' ? [json] : json, reusable: false });
}

function attach<T extends object>(value: T, text: Preserialized): T {
  Object.defineProperty(value, PRESERIALIZED, { value: text, enumerable: false });
  return Object.freeze(value);
}

function preserialized(value: unknown): readonly string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const text = (value as Record<symbol, Preserialized | undefined>)[PRESERIALIZED];
  if (!text) return undefined;
  const parts = text.parts;
  if (!text.reusable) text.parts = undefined;
  return parts;
}

/**
 * The JSON text of a JSON-RPC message as pieces to write one after the other: a preserialized
 * `result` keeps its pieces (a call result's quoted rows and its structured rows stay two
 * strings), anything else is one JSON.stringify. Writing the pieces instead of their
 * concatenation spares a flat copy of the whole body on the heap.
 */
export function jsonRpcParts(message: unknown): string[] {
  const m = message as { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown };
  const cached = m && m.error === undefined ? preserialized(m.result) : undefined;
  if (cached === undefined) return [JSON.stringify(message)];
  return [`{"jsonrpc":"2.0","id":${JSON.stringify(m.id ?? null)},"result":`, ...cached, '}'];
}

/** JSON.stringify for JSON-RPC messages, reusing a preserialized `result` when there is one. */
export function stringifyJsonRpc(message: unknown): string {
  const parts = jsonRpcParts(message);
  return parts.length === 1 ? parts[0] : parts.join('');
}
