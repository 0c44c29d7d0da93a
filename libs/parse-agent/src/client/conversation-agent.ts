import type { ToolEnvelope } from '../core/envelope';

/** A tool as the agent describes it in MCP shape; the client passes it to the model unchanged. */
export interface ConversationToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/**
 * What a conversation needs from an agent: its allowed tools and a way to run one. ParseAgent has
 * both; tests and other hosts may supply their own.
 */
export interface ConversationAgent {
  toolDefinitions(options?: { format?: 'mcp' }): ConversationToolDefinition[];
  execute(
    toolName: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<ToolEnvelope>;
}
