import { PassThrough } from 'node:stream';
import { createAgentServices } from '../../composition/create-agent-services';
import { ParseAgent } from '../../agent/parse-agent';
import { RateLimitExceededError } from '../../core/errors';
import { suppressSecurityBanners } from '../../core/security-banner';
import { McpDispatcher } from '../../mcp/mcp-dispatcher';
import { PromptRegistry } from '../../mcp/prompt-registry';
import { serveMcpOverStdio } from './mcp-stdio.transport';

type Message = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** The stdio framing over in-memory streams; the tools used here touch no Parse Server. */
describe('serveMcpOverStdio', () => {
  let started: Array<{ signal: AbortSignal }>;
  let built: ReturnType<typeof createAgentServices>;

  beforeEach(() => {
    suppressSecurityBanners();
    started = [];
    built = createAgentServices({
      parse: { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'mk' },
    });
    built.services.tools.register({
      name: 'wait_for_abort',
      description: 'Waits until cancelled.',
      handler: (_args, context) =>
        new Promise((resolve) => {
          started.push({ signal: context.signal });
          context.signal.addEventListener('abort', () => resolve('aborted'));
        }),
    });
    built.services.tools.register({
      name: 'echo',
      description: 'Returns its arguments.',
      handler: (args) => args,
    });
  });
  afterEach(() => built.close());

  function open(maxLineBytes?: number, services = built.services) {
    const input = new PassThrough();
    const output = new PassThrough();
    const logs: string[] = [];
    let text = '';
    output.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const agent = new ParseAgent({}, services);
    const session = serveMcpOverStdio({
      dispatcher: new McpDispatcher(services.tools, new PromptRegistry([])),
      agent,
      input,
      output,
      log: (line) => logs.push(line),
      maxLineBytes,
    });
    const messages = () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Message);
    const send = (value: unknown) => input.write(JSON.stringify(value) + '\n');
    return { input, session, messages, send, logs, raw: () => text };
  }

  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    if (!check()) throw new Error('condition not reached');
  };

  it('answers each line with one line, in whatever pieces the bytes arrive', async () => {
    const s = open();
    const line = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }) + '\n';
    for (const ch of line) s.input.write(ch);
    s.input.write(
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) +
        '\n\n' +
        JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }) +
        '\n',
    );
    s.input.end();
    await s.session.closed;
    expect(s.messages()).toEqual([
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: 3, result: {} },
    ]);
    expect(s.raw().endsWith('\n')).toBe(true);
  });

  it('answers a parse error, stays up, and sends nothing for notifications', async () => {
    const s = open();
    s.input.write('{not json\n');
    s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    s.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    s.input.end();
    await s.session.closed;
    expect(s.messages()).toEqual([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } },
      { jsonrpc: '2.0', id: 'after', result: {} },
    ]);
  });

  it('drops an oversized line without buffering it whole, then keeps serving', async () => {
    const s = open(256);
    s.input.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",');
    for (let i = 0; i < 10; i++) s.input.write(`"pad${i}":"${'x'.repeat(100)}",`);
    s.input.write('"end":1}}\n');
    s.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    s.input.end();
    await s.session.closed;
    const messages = s.messages();
    expect(messages).toHaveLength(2);
    expect(messages[0].error).toEqual({
      code: -32600,
      message: 'Message too large: over 256 bytes',
    });
    expect(messages[1]).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(s.logs.join('\n')).toMatch(/longer than 256 bytes/);
  });

  it('cancels the call named by notifications/cancelled, and only that one', async () => {
    const s = open();
    s.send({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'wait_for_abort', arguments: {} },
    });
    s.send({
      jsonrpc: '2.0',
      id: '7',
      method: 'tools/call',
      params: { name: 'wait_for_abort', arguments: {} },
    });
    await until(() => started.length === 2);
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    await until(() => started[0].signal.aborted);
    expect(started[1].signal.aborted).toBe(false);
    // A cancelled request gets no answer (the client stopped waiting for it).
    s.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    await until(() => s.messages().some((m) => m.id === 8));
    expect(s.messages().some((m) => m.id === 7)).toBe(false);
    await s.session.close();
    expect(started[1].signal.aborted).toBe(true);
  });

  it('charges listings to the rate limit as over HTTP: over it, an error line, and the call does not run', async () => {
    const limited = createAgentServices({
      parse: { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'mk' },
      rateLimiter: {
        check: () => {
          throw new RateLimitExceededError(5, 60, 60);
        },
      },
    });
    try {
      const s = open(undefined, limited.services);
      s.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      s.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
      s.input.end();
      await s.session.closed;
      const messages = s.messages();
      expect(messages.find((m) => m.id === 1)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32000, message: expect.stringMatching(/^Rate limit exceeded/) },
      });
      expect(messages.find((m) => m.id === 1)?.result).toBeUndefined();
      // ping costs nothing and is not charged.
      expect(messages.find((m) => m.id === 2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    } finally {
      await limited.close();
    }
  });
});
