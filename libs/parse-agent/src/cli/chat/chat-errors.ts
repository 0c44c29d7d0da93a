import { LlmProviderError } from '../../client/conversation-errors';
import { LLM_ENV } from '../../client/provider-from-env';
import { innermostCause } from '../../core/innermost-cause';

type Env = Record<string, string | undefined>;

/** The SDKs' names for "no HTTP answer at all" (OpenAI and Anthropic share them). */
const CONNECTION_ERRORS = new Set(['APIConnectionError', 'APIConnectionTimeoutError']);

/**
 * One line for an error the chat prints. The SDKs report an unreachable model server as
 * "Connection error." with the address and the cause buried in `cause`; this names both and the
 * setting to check. Anything else keeps its own message.
 */
export function chatErrorMessage(error: unknown, env: Env): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof LlmProviderError) || error.status !== undefined) return message;
  const sdkError = error.cause;
  const name = (sdkError as { constructor?: { name?: string } } | undefined)?.constructor?.name;
  if (!name || !CONNECTION_ERRORS.has(name)) return message;
  const baseURL = env[LLM_ENV.baseURL]?.trim();
  const where = baseURL ? `at ${baseURL} (${LLM_ENV.baseURL})` : `at its default address`;
  const timedOut = name === 'APIConnectionTimeoutError';
  const cause = innermostCause((sdkError as { cause?: unknown } | undefined)?.cause);
  return (
    `${error.provider}: ${timedOut ? 'no answer from' : 'could not connect to'} the language model server ${where}` +
    `${cause ? ` (${cause})` : ''}. Check ${LLM_ENV.baseURL} and ${LLM_ENV.provider}, and that the server is running.`
  );
}
