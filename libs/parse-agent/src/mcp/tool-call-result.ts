import type { ToolEnvelope } from '../core/envelope';
import { AgentUnauthorizedError } from '../core/errors';
import { isRecord } from '../format/is-record';
import {
  capQueryResult,
  MAX_TOOL_RESPONSE_BYTES,
  sizeDiagnostic,
} from '../format/response-size-cap';
import type { JsonSchema } from '../tools/tool-definition';
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
}

/** Error code carried in `_meta` when a result is too large to send. */
export const RESPONSE_TOO_LARGE = 'response_too_large';

const text = (value: string): TextContent => ({ type: 'text', text: value });

/**
 * Turns an `execute()` envelope into the MCP tool result. Tool failures are results with
 * `isError: true` (never JSON-RPC errors); their `error_code` travels in `_meta` so clients can
 * branch without parsing prose. Results over the byte cap never leave: `query_class` rows are
 * trimmed and annotated, everything else is refused with a description of what made it large.
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
  if (!envelope.success) {
    const meta: Record<string, unknown> = { [ERROR_CODE_META_KEY]: envelope.error_code };
    if (typeof envelope.retry_after === 'number') meta['parse.retry_after'] = envelope.retry_after;
    return { content: [text(String(envelope.error))], isError: true, _meta: meta };
  }

  const data = envelope.data;
  const pretty = prettyJson(data);
  if (Buffer.byteLength(pretty, 'utf8') <= maxBytes) {
    const result: CallToolResult = { content: [text(pretty)], isError: false };
    // MCP requires structured content to be an object; other shapes stay text-only.
    if (options.outputSchema && isRecord(data)) result.structuredContent = data;
    return result;
  }
  if (options.toolName === 'query_class' && isRecord(data)) {
    const recovered = capQueryResult(data, maxBytes);
    if (recovered) return { content: [text(prettyJson(recovered))], isError: false };
  }
  return {
    content: [text(sizeDiagnostic(options.toolName, data, maxBytes))],
    isError: true,
    _meta: { [ERROR_CODE_META_KEY]: RESPONSE_TOO_LARGE },
  };
}

export function cancelledResult(message: string): CallToolResult {
  return { content: [text(message)], isError: true, cancelled: true };
}

/** The text form of tool data: JSON with 2-space indentation (what the size cap measures). */
export function prettyJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'null';
}

/** A tool that refused the caller's identity fails the whole request (HTTP 401), not just the call. */
export function assertAuthorized(envelope: ToolEnvelope): void {
  if (!envelope.success && envelope.error_code === 'unauthorized') {
    throw new AgentUnauthorizedError();
  }
}
