import { AgentCancelledError, ParseAgentError, RateLimitExceededError } from './errors';
import { wrapUntrusted } from './untrusted-data';

/** What execute() resolves to and what the MCP layer carries: the spec's snake_case envelope. */
export interface SuccessEnvelope<T = unknown> {
  success: true;
  data: T;
}

export interface FailureEnvelope {
  success: false;
  error: string;
  error_code: string;
  retry_after?: number;
  details?: Record<string, unknown>;
  cancelled?: true;
}

export type ToolEnvelope<T = unknown> = SuccessEnvelope<T> | FailureEnvelope;

export function success<T>(data: T): SuccessEnvelope<T> {
  return { success: true, data };
}

export function failure(
  error: string,
  errorCode: string,
  details?: Record<string, unknown>,
): FailureEnvelope {
  const out: FailureEnvelope = { success: false, error, error_code: errorCode };
  if (details && Object.keys(details).length) out.details = details;
  return out;
}

/** Maps a library error to its envelope; anything else becomes a sanitized internal error. */
export function failureFromError(error: unknown, toolName: string): FailureEnvelope {
  if (error instanceof AgentCancelledError) {
    return { ...failure(error.message, error.errorCode), cancelled: true };
  }
  if (error instanceof RateLimitExceededError) {
    return {
      ...failure(error.message, error.errorCode, error.details),
      retry_after: error.retryAfter,
    };
  }
  if (error instanceof ParseAgentError) {
    // Text from an agent method or Parse Server is marked here, so every reader of the envelope
    // (an MCP client, the built-in conversation, an application's own model) gets the marks.
    const text =
      error.untrustedLead === undefined
        ? error.message
        : `${error.untrustedLead}\n${wrapUntrusted(error.message)}`;
    const message = error.errorCode === 'invalid_argument' ? `Invalid arguments: ${text}` : text;
    return failure(message, error.errorCode, error.details);
  }
  return failure(`${toolName} failed: internal error`, 'internal_error');
}
