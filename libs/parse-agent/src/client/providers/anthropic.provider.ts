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
  LlmRequest,
  LlmResponse,
  LlmToolCall,
  LlmToolDefinition,
} from '../../ports/llm-provider';
import { loadOptionalSdk } from './load-optional-sdk';
import {
  SdkLlmProvider,
  sdkClientSettings,
  type SdkProviderOptions,
  type SdkRequestOptions,
} from './sdk-llm-provider';
import type { StreamedResponse } from './streamed-response';
import { toolCallFromText } from './tool-arguments';

/** The Messages API requires a cap on output; this one leaves room for a table-sized answer. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

export interface AnthropicProviderOptions extends SdkProviderOptions {
  /** The API root, without `/v1` (the SDK adds it); default the Anthropic API. */
  baseURL?: string;
  /** Output cap per call when the request sets none. */
  maxTokens?: number;
}

/** The Messages API through the official `@anthropic-ai/sdk`. */
export class AnthropicProvider extends SdkLlmProvider<
  MessageCreateParamsBase,
  Message,
  RawMessageStreamEvent
> {
  readonly name = 'anthropic';
  protected readonly client: Anthropic;
  protected readonly maxTokens: number;

  constructor(options: AnthropicProviderOptions) {
    super(options.model);
    this.maxTokens = options.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS;
    const sdk = loadOptionalSdk<{ Anthropic: typeof Anthropic }>('@anthropic-ai/sdk', this.name);
    // The SDK appends /v1/messages; a base URL written the OpenAI way (ending in /v1) would double it.
    this.client = new sdk.Anthropic(
      sdkClientSettings(options, options.baseURL?.replace(/\/v1\/?$/, '')),
    );
    this.restrictEndpoints(options.allowedBaseUrls);
  }

  /** Where requests go: the SDK adds /v1 to its base URL. */
  protected currentBaseUrl(): string {
    return `${this.client.baseURL.replace(/\/+$/, '')}/v1`;
  }

  protected requestBody(request: LlmRequest): MessageCreateParamsBase {
    const body: MessageCreateParamsBase = {
      model: this.model,
      max_tokens: request.maxTokens ?? this.maxTokens,
      messages: toAnthropicMessages(request.messages),
    };
    const system = systemText(request);
    if (system) body.system = system;
    if (request.tools?.length) body.tools = request.tools.map(toAnthropicTool);
    return body;
  }

  protected async send(
    body: MessageCreateParamsBase,
    options: SdkRequestOptions,
  ): Promise<Message> {
    return (await this.client.messages.create({ ...body, stream: false }, options)) as Message;
  }

  protected sendStreaming(
    body: MessageCreateParamsBase,
    options: SdkRequestOptions,
  ): Promise<AsyncIterable<RawMessageStreamEvent>> {
    return this.client.messages.create({ ...body, stream: true }, options);
  }

  protected fromReply(message: Message): LlmResponse {
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
      model: message.model || this.model,
      stopReason: message.stop_reason ?? undefined,
    };
  }

  /** Text deltas as they come; a tool call's input arrives as JSON deltas and completes at its block's stop. */
  protected readChunk(event: RawMessageStreamEvent, into: StreamedResponse): void {
    switch (event.type) {
      case 'message_start':
        into.model = event.message.model;
        into.usage.inputTokens = inputTokens(event.message.usage);
        into.usage.outputTokens = event.message.usage?.output_tokens ?? 0;
        break;
      case 'content_block_start':
        if (event.content_block.type === 'tool_use') {
          const { id, name } = event.content_block;
          into.addToolCallPart(event.index, { id, name });
        }
        break;
      case 'content_block_delta':
        if (event.delta.type === 'text_delta') into.addText(event.delta.text);
        else if (event.delta.type === 'input_json_delta' && into.hasToolCall(event.index)) {
          into.addToolCallPart(event.index, { args: event.delta.partial_json });
        }
        break;
      case 'content_block_stop':
        into.closeToolCall(event.index);
        break;
      case 'message_delta':
        // message_delta carries cumulative counts; input is repeated only by some API versions.
        if (event.usage?.output_tokens !== undefined)
          into.usage.outputTokens = event.usage.output_tokens;
        if (event.usage?.input_tokens) into.usage.inputTokens = inputTokens(event.usage);
        if (event.delta.stop_reason) into.stopReason = event.delta.stop_reason;
        break;
    }
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
