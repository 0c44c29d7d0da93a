import { ParseAgentError } from '../core/errors';

/** The language model's API refused or failed the request (network, auth, rate limit, bad request). */
export class LlmProviderError extends ParseAgentError {
  readonly errorCode = 'llm_provider_error';
  constructor(
    readonly provider: string,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(`${provider} request failed: ${message}`);
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
