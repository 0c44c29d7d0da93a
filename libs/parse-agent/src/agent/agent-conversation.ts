import { ParseAgentConfigError } from '../core/errors';
import type {
  AgentConversation,
  ConversationAgent,
  ConversationAnswer,
  ConversationFactory,
  ConversationOptions,
} from '../ports/conversation';
import type { AgentAskOptions } from './agent-options';

/** Opens a conversation for `agent` through the services' factory, or says how to get one. */
export function openConversation(
  agent: ConversationAgent,
  factory: ConversationFactory | undefined,
  options: ConversationOptions,
): AgentConversation {
  if (!factory) {
    throw new ParseAgentConfigError(
      'This agent cannot hold a conversation: its services have no conversation factory. Create agents with ParseAgentFactory (Nest) or createAgentServices({ conversations: conversationFactory() }), then configure an LLM provider (LLM_PROVIDER, LLM_API_KEY, LLM_MODEL, LLM_BASE_URL).',
    );
  }
  return factory(agent, options);
}

/**
 * The conversation behind `agent.ask()`: a fresh history per question unless `reset: false`,
 * which continues the previous one with its settings.
 */
export class AskSession {
  protected current?: AgentConversation;

  constructor(protected readonly open: (settings: ConversationOptions) => AgentConversation) {}

  ask(question: string, options: AgentAskOptions = {}): Promise<ConversationAnswer> {
    const { reset = true, signal, ...settings } = options;
    const named = Object.entries(settings)
      .filter(([, value]) => value !== undefined)
      .map(([key]) => key);
    const hasSettings = named.length > 0;
    if (!reset && hasSettings) {
      return Promise.reject(
        new ParseAgentConfigError(
          `ask(..., { reset: false }) continues the current conversation, whose settings are fixed; drop ${named.join(', ')} or start a new conversation (reset: true, or agent.conversation(settings)).`,
        ),
      );
    }
    try {
      if (!this.current || hasSettings) this.current = this.open(settings);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.current.ask(question, { reset, signal });
  }
}
