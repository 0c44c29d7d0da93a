import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
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

export interface OpenAiProviderOptions extends SdkProviderOptions {
  /** Any OpenAI-compatible endpoint (LM Studio, Ollama, vLLM, DeepSeek...); default the OpenAI API. */
  baseURL?: string;
  /** How this provider is named in errors and usage: `openai` or `openai-compatible`. */
  name?: string;
}

/** Chat Completions through the official `openai` SDK, for OpenAI and compatible servers. */
export class OpenAiProvider extends SdkLlmProvider<
  ChatCompletionCreateParamsBase,
  ChatCompletion,
  ChatCompletionChunk
> {
  readonly name: string;
  protected readonly client: OpenAI;

  constructor(options: OpenAiProviderOptions) {
    super(options.model);
    this.name = options.name ?? 'openai';
    const sdk = loadOptionalSdk<{ OpenAI: typeof OpenAI }>('openai', this.name);
    this.client = new sdk.OpenAI(sdkClientSettings(options));
    this.restrictEndpoints(options.allowedBaseUrls);
  }

  protected currentBaseUrl(): string {
    return this.client.baseURL;
  }

  protected requestBody(request: LlmRequest): ChatCompletionCreateParamsBase {
    const body: ChatCompletionCreateParamsBase = {
      model: this.model,
      messages: toOpenAiMessages(request),
    };
    if (request.tools?.length) body.tools = request.tools.map(toOpenAiTool);
    // OpenAI itself wants max_completion_tokens; compatible servers mostly know only max_tokens.
    if (request.maxTokens !== undefined) {
      if (this.name === 'openai') body.max_completion_tokens = request.maxTokens;
      else body.max_tokens = request.maxTokens;
    }
    return body;
  }

  protected async send(
    body: ChatCompletionCreateParamsBase,
    options: SdkRequestOptions,
  ): Promise<ChatCompletion> {
    return (await this.client.chat.completions.create(
      { ...body, stream: false },
      options,
    )) as ChatCompletion;
  }

  protected sendStreaming(
    body: ChatCompletionCreateParamsBase,
    options: SdkRequestOptions,
  ): Promise<AsyncIterable<ChatCompletionChunk>> {
    return this.client.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      options,
    );
  }

  protected fromReply(completion: ChatCompletion): LlmResponse {
    const choice = completion.choices?.[0];
    const message = choice?.message;
    const toolCalls: LlmToolCall[] = [];
    for (const call of message?.tool_calls ?? []) {
      if (call.type !== 'function') continue;
      toolCalls.push(toolCallFromText(call.id, call.function.name, call.function.arguments));
    }
    return {
      text: message?.content ?? '',
      toolCalls,
      usage: {
        inputTokens: completion.usage?.prompt_tokens ?? 0,
        outputTokens: completion.usage?.completion_tokens ?? 0,
      },
      model: completion.model || this.model,
      stopReason: choice?.finish_reason ?? undefined,
    };
  }

  /** Text as it comes; tool calls arrive in pieces by index and complete when the stream ends. */
  protected readChunk(chunk: ChatCompletionChunk, into: StreamedResponse): void {
    into.model ||= chunk.model;
    if (chunk.usage) {
      into.usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
      into.usage.outputTokens = chunk.usage.completion_tokens ?? 0;
    }
    const choice = chunk.choices?.[0];
    if (!choice) return;
    if (choice.finish_reason) into.stopReason = choice.finish_reason;
    const delta = choice.delta;
    if (delta?.content) into.addText(delta.content);
    for (const part of delta?.tool_calls ?? []) {
      into.addToolCallPart(part.index, {
        id: part.id,
        name: part.function?.name,
        args: part.function?.arguments,
      });
    }
  }

  protected override finishStream(streamed: StreamedResponse): LlmResponse {
    streamed.closeOpenToolCalls();
    return super.finishStream(streamed);
  }
}

export function toOpenAiMessages(request: LlmRequest): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (request.system) out.push({ role: 'system', content: request.system });
  for (const message of request.messages) out.push(toOpenAiMessage(message));
  return out;
}

function toOpenAiMessage(message: LlmMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant':
      if (!message.toolCalls?.length) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content || null,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        })),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toOpenAiTool(tool: LlmToolDefinition): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}
