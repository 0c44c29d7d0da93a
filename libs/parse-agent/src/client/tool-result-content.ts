import { AgentUnauthorizedError, ParseAgentError } from '../core/errors';
import type { FailureEnvelope, ToolEnvelope } from '../core/envelope';
import { wrapUntrusted } from '../core/untrusted-data';

/**
 * What the model reads for a tool result: the envelope as compact JSON, keys as on the wire. A
 * successful result carries stored data, so it is marked as untrusted the way MCP results are; a
 * failure's message already marks whatever stored text it quotes.
 */
export function toolResultContent(envelope: ToolEnvelope): string {
  const json = JSON.stringify(envelope);
  return envelope.success ? wrapUntrusted(json) : json;
}

/**
 * An envelope for a tool that threw instead of resolving. Library errors keep their message and
 * code; anything else is reported without internals. Unauthorized is not a tool failure: it ends the
 * conversation, so it is rethrown.
 */
export function envelopeForThrown(error: unknown, toolName: string): FailureEnvelope {
  if (error instanceof AgentUnauthorizedError) throw error;
  if (error instanceof ParseAgentError) {
    return { success: false, error: error.message, error_code: error.errorCode };
  }
  return {
    success: false,
    error: `${toolName} failed: internal error`,
    error_code: 'internal_error',
  };
}

/** The result the model gets for a call it made with arguments that are not a JSON object. */
export function invalidArgumentsEnvelope(toolName: string, detail: string): FailureEnvelope {
  return {
    success: false,
    error: `Invalid arguments for ${toolName}: ${detail}. Send the arguments as one JSON object.`,
    error_code: 'invalid_argument',
  };
}

/** The result for a call the iteration cap left unrun; keeps the history valid for the next turn. */
export function notRunEnvelope(maxIterations: number): FailureEnvelope {
  return {
    success: false,
    error: `Not run: this question reached its limit of ${maxIterations} model calls.`,
    error_code: 'max_iterations',
  };
}
