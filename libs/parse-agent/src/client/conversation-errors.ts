import { ParseAgentError } from '../core/errors';

/** The most of a provider's own error text an `LlmProviderError` message carries. */
const MAX_PROVIDER_ERROR_TEXT = 500;

/**
 * The language model's API refused or failed the request (network, auth, rate limit, bad request).
 * The provider's text is kept to `MAX_PROVIDER_ERROR_TEXT` characters with a marker saying how
 * much was cut: it is the provider's to write (an HTML error page, a proxy's body), and it ends up
 * in logs and on terminals. The whole of it stays on `cause`.
 */
export class LlmProviderError extends ParseAgentError {
  readonly errorCode = 'llm_provider_error';
  constructor(
    readonly provider: string,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${provider} request failed: ${capProviderText(message)}`);
    if (options && 'cause' in options) (this as { cause?: unknown }).cause = options.cause;
  }
}

/** A second question was asked while the conversation was still answering the first. */
export class ConversationBusyError extends ParseAgentError {
  readonly errorCode = 'conversation_busy';
  constructor() {
    super(
      'This conversation is still answering a question. Await the previous ask()/reply() (or cancel it through its AbortSignal) before asking again, or start another ParseAgentConversation.',
    );
  }
}

function capProviderText(text: string): string {
  if (text.length <= MAX_PROVIDER_ERROR_TEXT) return text;
  let end = MAX_PROVIDER_ERROR_TEXT;
  // Never split a surrogate pair.
  if (/[\ud800-\udbff]/.test(text[end - 1])) end--;
  const cut = text.length - end;
  return `${text.slice(0, end)}… [${cut} more characters of the provider's text cut]`;
}
