export type { ConversationAgent, ConversationToolDefinition } from '../ports/conversation';
