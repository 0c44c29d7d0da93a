import type { LlmMessage } from '../ports/llm-provider';
import type { AskOptions, FinishReason, ToolCallRecord } from '../ports/conversation';
import type { ConversationUsage } from './conversation-usage';

/** What one question produced. `reply` continues the same conversation. */
export class ConversationResult {
  constructor(
    /** The model's final answer (its last text when the iteration cap stopped it). */
    readonly text: string,
    readonly finishReason: FinishReason,
    /** Model calls made for this question. */
    readonly iterations: number,
    readonly toolCalls: readonly ToolCallRecord[],
    /** Every message of the request that produced the answer, system prompt first. */
    readonly transcript: readonly LlmMessage[],
    /** Tokens and cost of this question's model calls. */
    readonly usage: ConversationUsage,
    protected readonly continueWith: (
      question: string,
      options?: Omit<AskOptions, 'reset'>,
    ) => Promise<ConversationResult>,
  ) {}

  /** True when the iteration cap ended the question before the model answered. */
  get reachedMaxIterations(): boolean {
    return this.finishReason === 'max_iterations';
  }

  reply(question: string, options?: Omit<AskOptions, 'reset'>): Promise<ConversationResult> {
    return this.continueWith(question, options);
  }
}

/** What a streamed question emits, in order; `done` carries the result. */
export type ConversationEvent =
  | { type: 'compacted'; summary: string; usage: ConversationUsage }
  | { type: 'text'; text: string; iteration: number }
  | {
      type: 'tool_call';
      id: string;
      name: string;
      arguments: Record<string, unknown>;
      iteration: number;
    }
  | ({ type: 'tool_result'; iteration: number } & ToolCallRecord)
  | { type: 'model_usage'; usage: ConversationUsage; model: string; iteration: number }
  | { type: 'done'; result: ConversationResult };
