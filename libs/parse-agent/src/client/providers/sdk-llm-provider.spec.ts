import type { LlmRequest, LlmResponse, LlmStreamEvent } from '../../ports/llm-provider';
import { SdkLlmProvider, sdkClientSettings, type SdkRequestOptions } from './sdk-llm-provider';
import type { StreamedResponse } from './streamed-response';

type Chunk = { text?: string; call?: { index: number; name: string; args: string }; end?: number };

/** A provider whose "SDK" records what it was sent and answers from canned data. */
class CannedProvider extends SdkLlmProvider<{ prompt: string }, string, Chunk> {
  readonly name = 'canned';
  readonly sent: Array<{
    streaming: boolean;
    body: { prompt: string };
    options: SdkRequestOptions;
  }> = [];

  constructor(
    private readonly reply: string,
    private readonly chunks: Chunk[],
    private readonly failure?: Error,
  ) {
    super('canned-model');
  }

  baseUrl = 'https://llm.example.com/v1';

  protected currentBaseUrl(): string {
    return this.baseUrl;
  }

  pin(allowed: readonly string[]): void {
    this.restrictEndpoints(allowed);
  }

  protected requestBody(request: LlmRequest): { prompt: string } {
    return { prompt: request.messages.map((m) => m.content).join('|') };
  }

  protected async send(body: { prompt: string }, options: SdkRequestOptions): Promise<string> {
    this.sent.push({ streaming: false, body, options });
    if (this.failure) throw this.failure;
    return this.reply;
  }

  protected async sendStreaming(
    body: { prompt: string },
    options: SdkRequestOptions,
  ): Promise<AsyncIterable<Chunk>> {
    this.sent.push({ streaming: true, body, options });
    const chunks = this.chunks;
    return (async function* () {
      yield* chunks;
    })();
  }

  protected fromReply(reply: string): LlmResponse {
    return {
      text: reply,
      toolCalls: [],
      usage: { inputTokens: 1, outputTokens: 1 },
      model: this.model,
    };
  }

  protected readChunk(chunk: Chunk, into: StreamedResponse): void {
    if (chunk.text) into.addText(chunk.text);
    if (chunk.call) into.addToolCallPart(chunk.call.index, chunk.call);
    if (chunk.end !== undefined) into.closeToolCall(chunk.end);
  }
}

const request: LlmRequest = { messages: [{ role: 'user', content: 'hi' }] };

describe('SdkLlmProvider', () => {
  it('sends one plain request when nobody listens for events, and never opens a stream', async () => {
    const provider = new CannedProvider('hello', [{ text: 'unused' }]);
    await expect(provider.complete(request)).resolves.toMatchObject({ text: 'hello' });
    expect(provider.sent).toEqual([
      { streaming: false, body: { prompt: 'hi' }, options: { signal: undefined } },
    ]);
  });

  it("streams when asked for events and hands the request's signal to the SDK", async () => {
    const provider = new CannedProvider('unused', [
      { text: 'a' },
      { call: { index: 0, name: 't', args: '{"k":1}' } },
      { text: 'b' },
      { end: 0 },
    ]);
    const controller = new AbortController();
    const events: LlmStreamEvent[] = [];
    const response = await provider.complete({ ...request, signal: controller.signal }, (e) =>
      events.push(e),
    );
    expect(provider.sent[0].streaming).toBe(true);
    expect(provider.sent[0].options.signal).toBe(controller.signal);
    expect(events.map((e) => e.type)).toEqual(['text', 'text', 'tool_call']);
    expect(response).toEqual({
      text: 'ab',
      toolCalls: [{ id: 'call_0', name: 't', arguments: { k: 1 } }],
      usage: { inputTokens: 0, outputTokens: 0 },
      model: 'canned-model',
      stopReason: undefined,
    });
  });

  it('lets an SDK error through unchanged (the conversation maps errors in one place)', async () => {
    const failure = Object.assign(new Error('429 rate limited'), { status: 429 });
    const provider = new CannedProvider('unused', [], failure);
    await expect(provider.complete(request)).rejects.toBe(failure);
  });
});

describe('sdkClientSettings', () => {
  it('renames the options to the names both SDKs take, and lets a provider rewrite the base URL', () => {
    const options = {
      apiKey: 'k',
      model: 'm',
      baseURL: 'http://gw/v1',
      timeoutMs: 5,
      maxRetries: 0,
      defaultHeaders: { 'x-route': 'a' },
    };
    expect(sdkClientSettings(options)).toEqual({
      apiKey: 'k',
      baseURL: 'http://gw/v1',
      timeout: 5,
      maxRetries: 0,
      defaultHeaders: { 'x-route': 'a' },
    });
    expect(sdkClientSettings(options, 'http://gw').baseURL).toBe('http://gw');
    expect(sdkClientSettings(options)).not.toHaveProperty('model');
  });
});

describe('SdkLlmProvider endpoint allowlist', () => {
  it('checks the base URL again before each request and sends nothing when it left the list', async () => {
    const provider = new CannedProvider('hello', []);
    provider.pin(['https://llm.example.com/v1']);
    await expect(provider.complete(request)).resolves.toMatchObject({ text: 'hello' });
    provider.baseUrl = 'https://elsewhere.example/v1';
    await expect(provider.complete(request)).rejects.toThrow(
      /https:\/\/elsewhere\.example\/v1 is not in the allowlist/,
    );
    expect(provider.sent).toHaveLength(1);
  });

  it('refuses at once when pinned to a list without the current base URL', () => {
    const provider = new CannedProvider('hello', []);
    expect(() => provider.pin(['https://other.example'])).toThrow(/allowedBaseUrls/);
  });
});
