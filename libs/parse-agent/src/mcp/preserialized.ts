/**
 * Results that are the same for many requests (a tools list) carry their JSON text, computed once,
 * so transports need not serialize them again for every request.
 */
const PRESERIALIZED = Symbol.for('nestjs-parse-agent.preserialized');

export function withPreserializedJson<T extends object>(value: T): T {
  Object.defineProperty(value, PRESERIALIZED, { value: JSON.stringify(value), enumerable: false });
  return Object.freeze(value);
}

/** Like withPreserializedJson, with JSON text the caller already built for `value`. */
export function withPreserializedText<T extends object>(value: T, json: string): T {
  Object.defineProperty(value, PRESERIALIZED, { value: json, enumerable: false });
  return Object.freeze(value);
}

function preserialized(value: unknown): string | undefined {
  return value !== null && typeof value === 'object'
    ? ((value as Record<symbol, unknown>)[PRESERIALIZED] as string | undefined)
    : undefined;
}

/** JSON.stringify for JSON-RPC messages, reusing a preserialized `result` when there is one. */
export function stringifyJsonRpc(message: unknown): string {
  const m = message as { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown };
  const cached = m && m.error === undefined ? preserialized(m.result) : undefined;
  if (cached === undefined) return JSON.stringify(message);
  return `{"jsonrpc":"2.0","id":${JSON.stringify(m.id ?? null)},"result":${cached}}`;
}
