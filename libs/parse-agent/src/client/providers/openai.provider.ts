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
  LlmProvider,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
  LlmToolCall,
  LlmToolDefinition,
} from '../../ports/llm-provider';
import { loadOptionalSdk } from './load-optional-sdk';
import { toolCallFromText } from './tool-arguments';

export interface OpenAiProviderOptions {
  apiKey: string;
  model: string;
  /** Any OpenAI-compatible endpoint (LM Studio, Ollama, vLLM, DeepSeek...); default the OpenAI API. */
  baseURL?: string;
  /** Per-request timeout in milliseconds (the SDK's default when unset). */
  timeoutMs?: number;
  /** Retries the SDK makes on connection errors, 429 and 5xx (the SDK's default when unset). */
  maxRetries?: number;
  /** How this provider is named in errors and usage: `openai` or `openai-compatible`. */
  name?: string;
  /** Extra headers for every request (e.g. a gateway's routing header). */
  defaultHeaders?: Record<string, string>;
}

/** Chat Completions through the official `openai` SDK, for OpenAI and compatible servers. */
export class OpenAiProvider implements LlmProvider {
  readonly name: string;
  readonly model: string;
  protected readonly client: OpenAI;

  constructor(options: OpenAiProviderOptions) {
    this.name = options.name ?? 'openai';
    this.model = options.model;
    const sdk = loadOptionalSdk<{ OpenAI: typeof OpenAI }>('openai', this.name);
    this.client = new sdk.OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseURL,
      timeout: options.timeoutMs,
      maxRetries: options.maxRetries,
      defaultHeaders: options.defaultHeaders,
    });
  }

  async complete(
    request: LlmRequest,
    onEvent?: (event: LlmStreamEvent) => void,
  ): Promise<LlmResponse> {
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
    const options = { signal: request.signal };
    if (!onEvent) {
      const completion = (await this.client.chat.completions.create(
        { ...body, stream: false },
        options,
      )) as ChatCompletion;
      return fromCompletion(completion, this.model);
    }
    const stream = await this.client.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      options,
    );
    return collectStream(stream, this.model, onEvent);
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

function fromCompletion(completion: ChatCompletion, requestedModel: string): LlmResponse {
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
    model: completion.model || requestedModel,
    stopReason: choice?.finish_reason ?? undefined,
  };
}

/** Assembles streamed deltas: text as it comes, tool calls by index once complete. */
async function collectStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  requestedModel: string,
  onEvent: (event: LlmStreamEvent) => void,
): Promise<LlmResponse> {
  let text = '';
  let model = '';
  let stopReason: string | undefined;
  const usage = { inputTokens: 0, outputTokens: 0 };
  const partial = new Map<number, { id: string; name: string; args: string }>();
  for await (const chunk of stream) {
    model ||= chunk.model;
    if (chunk.usage) {
      usage.inputTokens = chunk.usage.prompt_tokens ?? 0;
      usage.outputTokens = chunk.usage.completion_tokens ?? 0;
    }
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) stopReason = choice.finish_reason;
    const delta = choice.delta;
    if (delta?.content) {
      text += delta.content;
      onEvent({ type: 'text', text: delta.content });
    }
    for (const part of delta?.tool_calls ?? []) {
      const entry = partial.get(part.index) ?? { id: '', name: '', args: '' };
      if (part.id) entry.id = part.id;
      if (part.function?.name) entry.name += part.function.name;
      if (part.function?.arguments) entry.args += part.function.arguments;
      partial.set(part.index, entry);
    }
  }
  const toolCalls = [...partial.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, p]) => toolCallFromText(p.id || `call_${index}`, p.name, p.args));
  for (const call of toolCalls) onEvent({ type: 'tool_call', call });
  return { text, toolCalls, usage, model: model || requestedModel, stopReason };
}
