import type { LlmResponse, LlmStreamEvent, LlmToolCall, LlmUsage } from '../../ports/llm-provider';
import { toolCallFromText } from './tool-arguments';

/**
 * A model turn put together from a provider's stream: text is reported as it arrives, a tool call
 * once its argument text is complete (parsed then, never in pieces). The provider reads its own
 * event format and feeds the pieces in; the result is the same LlmResponse a non-streamed call gives.
 */
export class StreamedResponse {
  text = '';
  /** The model as the stream names it; empty until it does. */
  model = '';
  stopReason?: string;
  readonly usage: LlmUsage = { inputTokens: 0, outputTokens: 0 };
  readonly toolCalls: LlmToolCall[] = [];
  protected readonly open = new Map<number, { id: string; name: string; args: string }>();

  constructor(protected readonly onEvent: (event: LlmStreamEvent) => void) {}

  addText(text: string): void {
    this.text += text;
    this.onEvent({ type: 'text', text });
  }

  /** Whether a tool call is being assembled at this position of the turn. */
  hasToolCall(index: number): boolean {
    return this.open.has(index);
  }

  /** Adds a piece of the tool call at `index`, starting it on first sight: names and argument text append, an id replaces. */
  addToolCallPart(index: number, part: { id?: string; name?: string; args?: string }): void {
    let call = this.open.get(index);
    if (!call) this.open.set(index, (call = { id: '', name: '', args: '' }));
    if (part.id) call.id = part.id;
    if (part.name) call.name += part.name;
    if (part.args) call.args += part.args;
  }

  /** Completes the tool call at `index` (nothing when none is open there) and reports it. */
  closeToolCall(index: number): void {
    const call = this.open.get(index);
    if (!call) return;
    this.open.delete(index);
    const parsed = toolCallFromText(call.id || `call_${index}`, call.name, call.args);
    this.toolCalls.push(parsed);
    this.onEvent({ type: 'tool_call', call: parsed });
  }

  /** Completes every call still open, in the order of their positions. */
  closeOpenToolCalls(): void {
    for (const index of [...this.open.keys()].sort((a, b) => a - b)) this.closeToolCall(index);
  }

  /** The assembled turn; `requestedModel` stands in when the stream never named its model. */
  response(requestedModel: string): LlmResponse {
    return {
      text: this.text,
      toolCalls: this.toolCalls,
      usage: this.usage,
      model: this.model || requestedModel,
      stopReason: this.stopReason,
    };
  }
}
