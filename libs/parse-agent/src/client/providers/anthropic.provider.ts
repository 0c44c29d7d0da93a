import type Anthropic from '@anthropic-ai/sdk';
import type {
  ContentBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  RawMessageStreamEvent,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type {
  LlmMessage,
  LlmProvider,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  LlmToolCall,
  LlmToolDefinition,
  LlmUsage,
} from '../../ports/llm-provider';
import { loadOptionalSdk } from './load-optional-sdk';
import { toolCallFromText } from './tool-arguments';

/** The Messages API requires a cap on output; this one leaves room for a table-sized answer. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

export interface AnthropicProviderOptions {
  apiKey: string;
  model: string;
  /** The API root, without `/v1` (the SDK adds it); default the Anthropic API. */
  baseURL?: string;
  timeoutMs?: number;
  maxRetries?: number;
  /** Output cap per call when the request sets none. */
  maxTokens?: number;
  defaultHeaders?: Record<string, string>;
}

/** The Messages API through the official `@anthropic-ai/sdk`. */
export class AnthropicProvider implements LlmProvider {
  readonly name = 'anthropic';
  readonly model: string;
  protected readonly client: Anthropic;
  protected readonly maxTokens: number;

  constructor(options: AnthropicProviderOptions) {
    this.model = options.model;
    this.maxTokens = options.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS;
    const sdk = loadOptionalSdk<{ Anthropic: typeof Anthropic }>('@anthropic-ai/sdk', this.name);
    this.client = new sdk.Anthropic({
      apiKey: options.apiKey,
      // The SDK appends /v1/messages; a base URL written the OpenAI way (ending in /v1) would double it.
      baseURL: options.baseURL?.replace(/\/v1\/?$/, ''),
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
      defaultHeaders: options.defaultHeaders,
    });
  }

  async complete(
    request: LlmRequest,
    onEvent?: (event: LlmStreamEvent) => void,
  ): Promise<LlmResponse> {
    const body: MessageCreateParamsBase = {
      model: this.model,
      max_tokens: request.maxTokens ?? this.maxTokens,
      messages: toAnthropicMessages(request.messages),
    };
    const system = systemText(request);
    if (system) body.system = system;
    if (request.tools?.length) body.tools = request.tools.map(toAnthropicTool);
    const options = { signal: request.signal };
    if (!onEvent) {
      const message = (await this.client.messages.create(
        { ...body, stream: false },
        options,
      )) as Message;
      return fromMessage(message, this.model);
    }
    const stream = await this.client.messages.create({ ...body, stream: true }, options);
    return collectStream(stream, this.model, onEvent);
  }
}

/** The request's system prompt plus any system turns (e.g. a compaction summary), in order. */
function systemText(request: LlmRequest): string {
  const parts = request.system ? [request.system] : [];
  for (const m of request.messages) if (m.role === 'system') parts.push(m.content);
  return parts.join('\n\n');
}

/**
 * Maps the history to alternating user/assistant turns: tool results travel in a user turn, and
 * consecutive turns of one role are merged, as the Messages API requires.
 */
export function toAnthropicMessages(messages: readonly LlmMessage[]): MessageParam[] {
  const out: Array<{ role: 'user' | 'assistant'; content: ContentBlockParam[] }> = [];
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (!blocks.length) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        push('user', [{ type: 'text', text: message.content }]);
        break;
      case 'assistant': {
        const blocks: ContentBlockParam[] = [];
        if (message.content) blocks.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls ?? []) {
          blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments });
        }
        push('assistant', blocks);
        break;
      }
      case 'tool':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: message.toolCallId,
            content: message.content,
            ...(message.isError ? { is_error: true } : {}),
          },
        ]);
        break;
    }
  }
  return out as MessageParam[];
}

function toAnthropicTool(tool: LlmToolDefinition): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.inputSchema } as Tool['input_schema'],
  };
}

type AnthropicUsageLike = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
};

/** Cache reads and writes are input too; counting them keeps totals honest. */
function inputTokens(usage: AnthropicUsageLike | undefined): number {
  if (!usage) return 0;
  return (
    (usage.input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0) +
    (usage.cache_read_input_tokens ?? 0)
  );
}

function fromMessage(message: Message, requestedModel: string): LlmResponse {
  let text = '';
  const toolCalls: LlmToolCall[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') {
      const input = block.input;
      toolCalls.push(
        input && typeof input === 'object' && !Array.isArray(input)
          ? { id: block.id, name: block.name, arguments: input as Record<string, unknown> }
          : { ...toolCallFromText(block.id, block.name, JSON.stringify(input ?? {})) },
      );
    }
  }
  return {
    text,
    toolCalls,
    usage: {
      inputTokens: inputTokens(message.usage),
      outputTokens: message.usage?.output_tokens ?? 0,
    },
    model: message.model || requestedModel,
    stopReason: message.stop_reason ?? undefined,
  };
}

/** Assembles the event stream: text deltas as they come, tool inputs from their JSON deltas. */
async function collectStream(
  stream: AsyncIterable<RawMessageStreamEvent>,
  requestedModel: string,
  onEvent: (event: LlmStreamEvent) => void,
): Promise<LlmResponse> {
  let text = '';
  let model = '';
  let stopReason: string | undefined;
  const usage: LlmUsage = { inputTokens: 0, outputTokens: 0 };
  const blocks = new Map<number, { id: string; name: string; json: string }>();
  const toolCalls: LlmToolCall[] = [];
  for await (const event of stream) {
    switch (event.type) {
      case 'message_start':
        model = event.message.model;
        usage.inputTokens = inputTokens(event.message.usage);
        usage.outputTokens = event.message.usage?.output_tokens ?? 0;
        break;
      case 'content_block_start':
        if (event.content_block.type === 'tool_use') {
          blocks.set(event.index, {
            id: event.content_block.id,
            name: event.content_block.name,
            json: '',
          });
        }
        break;
      case 'content_block_delta':
        if (event.delta.type === 'text_delta') {
          text += event.delta.text;
          onEvent({ type: 'text', text: event.delta.text });
        } else if (event.delta.type === 'input_json_delta') {
          const block = blocks.get(event.index);
          if (block) block.json += event.delta.partial_json;
        }
        break;
      case 'content_block_stop': {
        const block = blocks.get(event.index);
        if (block) {
          const call = toolCallFromText(block.id, block.name, block.json);
          toolCalls.push(call);
          onEvent({ type: 'tool_call', call });
        }
        break;
      }
      case 'message_delta':
        // message_delta carries cumulative counts; input is repeated only by some API versions.
        if (event.usage?.output_tokens !== undefined)
          usage.outputTokens = event.usage.output_tokens;
        if (event.usage?.input_tokens) usage.inputTokens = inputTokens(event.usage);
        if (event.delta.stop_reason) stopReason = event.delta.stop_reason;
        break;
    }
  }
  return { text, toolCalls, usage, model: model || requestedModel, stopReason };
}
