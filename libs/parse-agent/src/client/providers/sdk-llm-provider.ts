import type {
  LlmProvider,
  LlmRequest,
  LlmResponse,
  LlmStreamEvent,
} from '../../ports/llm-provider';
import { assertAllowedEndpoint } from '../endpoint-allowlist';
import { StreamedResponse } from './streamed-response';

/** The settings every provider built on an official SDK takes. */
export interface SdkProviderOptions {
  apiKey: string;
  model: string;
  /** The API root; default the provider's own API. */
  baseURL?: string;
  /** Per-request timeout in milliseconds (the SDK's default when unset). */
  timeoutMs?: number;
  /** Retries the SDK makes on connection errors, 429 and 5xx (the SDK's default when unset). */
  maxRetries?: number;
  /** Extra headers for every request (e.g. a gateway's routing header). */
  defaultHeaders?: Record<string, string>;
  /**
   * Base URLs this provider may call. When set, the base URL in use must equal one or lie under
   * one, checked when the provider is built and again before every request.
   */
  allowedBaseUrls?: readonly string[];
}

/** The client settings the official OpenAI and Anthropic SDKs both take, under these names. */
export interface SdkClientSettings {
  apiKey: string;
  baseURL?: string;
  timeout?: number;
  maxRetries?: number;
  defaultHeaders?: Record<string, string>;
}

export function sdkClientSettings(
  options: SdkProviderOptions,
  baseURL = options.baseURL,
): SdkClientSettings {
  return {
    apiKey: options.apiKey,
    baseURL,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    defaultHeaders: options.defaultHeaders,
  };
}

/** Per-request options handed to the SDK: the request's signal cancels the HTTP request. */
export interface SdkRequestOptions {
  signal?: AbortSignal;
}

/**
 * One model turn over an official SDK: shape the request body, send it plain or streaming, and turn
 * the answer into an LlmResponse. A subclass supplies only what its API spells differently. Errors
 * are left as the SDK throws them (the conversation maps them in one place), and the HTTP request
 * is cancelled through the SDK's own signal option.
 */
export abstract class SdkLlmProvider<Body, Reply, Chunk> implements LlmProvider {
  abstract readonly name: string;
  readonly model: string;
  private allowedBaseUrls?: readonly string[];

  protected constructor(model: string) {
    this.model = model;
  }

  /** The base URL requests go to now, as the SDK client holds it. */
  protected abstract currentBaseUrl(): string;

  /** Pins the endpoints this provider may call, and checks the current one at once. */
  protected restrictEndpoints(allowed: readonly string[] | undefined): void {
    if (!allowed) return;
    this.allowedBaseUrls = Object.freeze([...allowed]);
    assertAllowedEndpoint(this.currentBaseUrl(), this.allowedBaseUrls);
  }

  async complete(
    request: LlmRequest,
    onEvent?: (event: LlmStreamEvent) => void,
  ): Promise<LlmResponse> {
    // Again before each request: nothing leaves for a host outside the list, even if the client
    // was re-pointed after construction.
    if (this.allowedBaseUrls) assertAllowedEndpoint(this.currentBaseUrl(), this.allowedBaseUrls);
    const body = this.requestBody(request);
    const options: SdkRequestOptions = { signal: request.signal };
    if (!onEvent) return this.fromReply(await this.send(body, options));
    const stream = await this.sendStreaming(body, options);
    const streamed = new StreamedResponse(onEvent);
    for await (const chunk of stream) this.readChunk(chunk, streamed);
    return this.finishStream(streamed);
  }

  /** The API's request body for one turn, without the streaming switch. */
  protected abstract requestBody(request: LlmRequest): Body;

  protected abstract send(body: Body, options: SdkRequestOptions): Promise<Reply>;

  protected abstract sendStreaming(
    body: Body,
    options: SdkRequestOptions,
  ): Promise<AsyncIterable<Chunk>>;

  /** A complete (non-streamed) answer as an LlmResponse. */
  protected abstract fromReply(reply: Reply): LlmResponse;

  /** Feeds one streamed event into the turn being assembled. */
  protected abstract readChunk(chunk: Chunk, into: StreamedResponse): void;

  /** The assembled turn once the stream has ended. */
  protected finishStream(streamed: StreamedResponse): LlmResponse {
    return streamed.response(this.model);
  }
}
