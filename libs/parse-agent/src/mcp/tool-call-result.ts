import type { ToolEnvelope } from '../core/envelope';
import { UNTRUSTED_WRAPPER_BYTES, unwrapUntrusted, wrapUntrusted } from '../core/untrusted-data';
import {
  AgentUnauthorizedError,
  LIMITER_UNAVAILABLE,
  RateLimiterUnavailableError,
} from '../core/errors';
import { isPlainRecord } from '../core/plain-object';
import { takeSerializedJson } from '../format/serialized-json';
import {
  capToolResult,
  MAX_TOOL_RESPONSE_BYTES,
  sizeDiagnostic,
  type OversizeContext,
} from '../format/response-size-cap';
import type { JsonSchema } from '../tools/tool-definition';
import { withPreserializedText } from './preserialized';
import { ERROR_CODE_META_KEY } from './protocol.constants';

export interface TextContent {
  type: 'text';
  text: string;
}

/** The `result` of a `tools/call` response. */
export interface CallToolResult {
  content: TextContent[];
  isError: boolean;
  structuredContent?: Record<string, unknown>;
  cancelled?: true;
  _meta?: Record<string, unknown>;
}

export interface CallToolResultOptions {
  toolName: string;
  /** The tool's declared output schema: only such tools get `structuredContent`. */
  outputSchema?: JsonSchema;
  /** The call was cancelled (its signal or agent aborted) even if the envelope says otherwise. */
  cancelled?: boolean;
  /** Text for a cancellation the envelope does not describe. */
  cancelledText?: string;
  maxBytes?: number;
  /**
   * 'trim-rows': an oversized result is cut down to what fits (its heaviest field left out, the
   * leading rows or objects kept) and says so in `_truncated`; 'refuse' sends only the refusal.
   */
  oversize?: 'refuse' | 'trim-rows';
  /** The tool's input schema: oversize hints name only the arguments it declares. */
  inputSchema?: JsonSchema;
  /** The call's arguments, for the next-page hint of a cut result. */
  args?: Record<string, unknown>;
  /**
   * Wrap successful text results in a per-response random delimiter with one line saying the
   * content is data, not instructions (default true). `structuredContent` is never wrapped.
   * False also sends error texts without the marks the envelope put around quoted text.
   */
  wrapUntrustedData?: boolean;
}

/** Error code carried in `_meta` when a result is too large to send. */
export const RESPONSE_TOO_LARGE = 'response_too_large';

const text = (value: string): TextContent => ({ type: 'text', text: value });

/**
 * Turns an `execute()` envelope into the MCP tool result. Tool failures are results with
 * `isError: true` (never JSON-RPC errors); their `error_code` travels in `_meta` so clients can
 * branch without parsing prose. Results over the byte cap never leave: a tool that recovers
 * (`oversize: 'trim-rows'`) sends what fits, annotated; any other is refused with a description of
 * what made it large and how to ask for less with its own arguments.
 */
export function toCallToolResult(
  envelope: ToolEnvelope,
  options: CallToolResultOptions,
): CallToolResult {
  const maxBytes = options.maxBytes ?? MAX_TOOL_RESPONSE_BYTES;
  if (!envelope.success && envelope.cancelled) {
    return cancelledResult(envelope.error || 'Cancelled by client');
  }
  if (options.cancelled) {
    const message = envelope.success ? undefined : envelope.error;
    return cancelledResult(message || options.cancelledText || 'Cancelled by client');
  }
  const wrap = options.wrapUntrustedData !== false;
  if (!envelope.success) {
    // Error text quoting what the library did not write arrives marked by the envelope already
    // (failureFromError); a server told not to wrap sends it plain, like its results.
    const error = wrap ? String(envelope.error) : unwrapUntrusted(String(envelope.error));
    const meta: Record<string, unknown> = { [ERROR_CODE_META_KEY]: envelope.error_code };
    if (typeof envelope.retry_after === 'number') meta['parse.retry_after'] = envelope.retry_after;
    const result: CallToolResult = {
      content: [text(error)],
      isError: true,
      _meta: meta,
    };
    // The code and details (kind, denied_field, allowed_fields, suggested_rewrite) let a client
    // repair its call without parsing prose. A tool with an output schema keeps them in _meta
    // only: clients validate any structuredContent against that schema.
    const failure: Record<string, unknown> = {
      error,
      error_code: envelope.error_code,
    };
    if (envelope.details) failure.details = envelope.details;
    if (typeof envelope.retry_after === 'number') failure.retry_after = envelope.retry_after;
    if (options.outputSchema && !acceptsFailure(options.outputSchema)) {
      if (envelope.details) meta['parse.details'] = envelope.details;
    } else {
      result.structuredContent = failure;
    }
    return result;
  }

  // The wrapper counts against the cap like the data does.
  const budget = wrap ? maxBytes - UNTRUSTED_WRAPPER_BYTES : maxBytes;
  const data = envelope.data;
  // Data the formatter serialized arrives with its text and size; anything else is measured here.
  const serialized = takeSerializedJson(data);
  let json = serialized?.json ?? compactJson(data);
  let sent: unknown = data;
  if ((serialized?.bytes ?? Buffer.byteLength(json, 'utf8')) > budget) {
    const context = oversizeContext(options);
    const recovered =
      oversizeOf(options) === 'trim-rows' && isPlainRecord(data)
        ? capToolResult(data, budget, context)
        : null;
    if (!recovered) {
      return {
        content: [text(sizeDiagnostic(data, maxBytes, context))],
        isError: true,
        _meta: { [ERROR_CODE_META_KEY]: RESPONSE_TOO_LARGE },
      };
    }
    sent = recovered;
    json = compactJson(recovered);
  }
  const { value, quoted } = wrap
    ? wrappedText(json)
    : { value: json, quoted: [JSON.stringify(json)] };
  const result: CallToolResult = { content: [text(value)], isError: false };
  // MCP requires structured content to be an object; other shapes stay text-only.
  if (options.outputSchema && isPlainRecord(sent)) result.structuredContent = sent;
  return withResultJson(result, quoted, json);
}

/**
 * The wrapped text of a result and its JSON string literal, built from the pieces: the notice and
 * tags are quoted on their own and the data's text once, so the wrapped text is never copied into
 * one flat string only to be quoted (a copy of every row per call). Same text as wrapUntrusted.
 */
function wrappedText(json: string): { value: string; quoted: string[] } {
  // NUL never occurs in the notice or the tags: it marks where the data goes.
  const [before, after] = wrapUntrusted('\u0000').split('\u0000');
  const quoted = [
    JSON.stringify(before).slice(0, -1),
    JSON.stringify(json).slice(1, -1),
    JSON.stringify(after).slice(1),
  ];
  return { value: before + json + after, quoted };
}

/** An output schema with a failure alternative (`anyOf` naming error_code) takes failures too. */
function acceptsFailure(schema: JsonSchema): boolean {
  const alternatives = schema.anyOf;
  return (
    Array.isArray(alternatives) &&
    alternatives.some(
      (alt: unknown) =>
        isPlainRecord(alt) && isPlainRecord(alt.properties) && 'error_code' in alt.properties,
    )
  );
}

function oversizeOf(options: CallToolResultOptions): 'refuse' | 'trim-rows' {
  return options.oversize ?? (options.toolName === 'query_class' ? 'trim-rows' : 'refuse');
}

function oversizeContext(options: CallToolResultOptions): OversizeContext {
  const properties = options.inputSchema?.properties;
  return {
    toolName: options.toolName,
    argumentNames: isPlainRecord(properties) ? Object.keys(properties) : [],
    args: options.args,
  };
}

/**
 * Attaches the wire JSON of a successful result, built from the data's JSON text computed once:
 * the same rows are not serialized again for `structuredContent`.
 */
function withResultJson(
  result: CallToolResult,
  quotedText: readonly string[],
  dataJson: string,
): CallToolResult {
  // Pieces, not one string: the transport writes them as they are (see jsonRpcParts).
  const parts = ['{"content":[{"type":"text","text":', ...quotedText];
  if (result.structuredContent)
    parts.push('}],"isError":false,"structuredContent":', dataJson, '}');
  else parts.push('}],"isError":false}');
  return withPreserializedText(result, parts);
}

export { unwrapUntrusted, wrapUntrusted };

export function cancelledResult(message: string): CallToolResult {
  return { content: [text(message)], isError: true, cancelled: true };
}

/**
 * The text form of tool data: compact JSON (what the size cap measures). Indentation would cost the
 * model about a quarter more tokens for the same content; key order is the order the data was built in.
 */
export function compactJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

/** A tool that refused the caller's identity fails the whole request (HTTP 401), not just the call. */
export function assertAuthorized(envelope: ToolEnvelope): void {
  if (!envelope.success && envelope.error_code === 'unauthorized') {
    throw new AgentUnauthorizedError();
  }
}

/**
 * Throws RateLimiterUnavailableError when the call was refused because the rate limiter could not
 * count it (its store is unreachable): not the client's fault nor a real limit, so the transport
 * answers it as a JSON-RPC error with HTTP 503 and Retry-After instead of a tool result.
 */
export function assertLimiterAvailable(envelope: ToolEnvelope): void {
  if (
    !envelope.success &&
    envelope.error_code === 'rate_limited' &&
    envelope.details?.kind === LIMITER_UNAVAILABLE
  ) {
    throw new RateLimiterUnavailableError(envelope.retry_after ?? 1, 0, 0, envelope.error);
  }
}
