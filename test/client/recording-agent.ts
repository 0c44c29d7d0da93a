import type { ToolEnvelope } from 'nestjs-parse-agent/core/envelope';
import type { ConversationAgent } from 'nestjs-parse-agent/ports/conversation';

export type ToolHandler = (
  name: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
) => Promise<ToolEnvelope>;

/** A stand-in agent with one tool that records every call; its handler is set per test. */
export class RecordingAgent implements ConversationAgent {
  readonly calls: Array<{ name: string; args: Record<string, unknown>; signal?: AbortSignal }> = [];
  constructor(public handler: ToolHandler) {}
  toolDefinitions() {
    return [
      {
        name: 'count_objects',
        description: 'Count the objects of a class',
        inputSchema: {
          type: 'object',
          properties: { class_name: { type: 'string' }, where: { type: 'object' } },
          required: ['class_name'],
        },
      },
    ];
  }
  execute(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal } = {}) {
    this.calls.push({ name, args, signal: options.signal });
    return this.handler(name, args, options.signal);
  }
}
