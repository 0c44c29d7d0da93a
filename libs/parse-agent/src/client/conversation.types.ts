export type {
  AskOptions,
  ConversationOptions,
  FinishReason,
  ToolCallRecord,
} from '../ports/conversation';

export const DEFAULT_MAX_ITERATIONS = 8;
