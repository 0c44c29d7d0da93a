import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { runCliWithInput, type CliRun } from './cli-process';

/** One request as a server received it. */
type Received = { method: string; url: string; headers: IncomingMessage['headers']; body: string };

/** A loopback HTTP server that records every request and answers with `handle`. */
async function recordingServer(
  handle: (req: Received, res: ServerResponse) => void,
): Promise<{ server: Server; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      handle(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, received };
}

/** A minimal Streamable HTTP answer to one JSON-RPC message (enough for the bridge's exchange). */
function answerMcp(req: Received, res: ServerResponse, serverName: string): void {
  if (req.method === 'GET') {
    res.writeHead(405).end();
    return;
  }
  if (req.method === 'DELETE') {
    res.writeHead(200).end();
    return;
  }
  const message = JSON.parse(req.body) as { id?: number; method?: string };
  if (message.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  const result =
    message.method === 'initialize'
      ? {
          protocolVersion: '2025-06-18',
          capabilities: {},
          serverInfo: { name: serverName, version: '1' },
        }
      : { tools: [{ name: `${serverName}_tool`, inputSchema: { type: 'object' } }] };
  res
    .writeHead(200, {
      'content-type': 'application/json',
      'mcp-session-id': `${serverName}-session`,
    })
    .end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
}

const LINES =
  [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'redirect-test', version: '1' },
      },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ]
    .map((message) => JSON.stringify(message))
    .join('\n') + '\n';

type Answer = { id?: number; result?: unknown; error?: { message: string } };
const answers = (run: CliRun): Answer[] =>
  run.stdout
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as Answer);

/**
 * `parse-agent connect` as a child process against two real loopback origins: the endpoint it was
 * given (127.0.0.1:A) and a foreign one (localhost:B, or 127.0.0.1:B). Whatever the first answers
 * with, nothing (no credential, no message) may reach the second, and nothing the second says may
 * come back as the app's answer.
 */
describe('parse-agent connect and redirects (child process, real loopback servers)', () => {
  const apiKey = `op-${randomBytes(16).toString('hex')}`;
  const sessionToken = `r:${randomBytes(16).toString('hex')}`;
  let app: Awaited<ReturnType<typeof recordingServer>>;
  let foreign: Awaited<ReturnType<typeof recordingServer>>;
  let appUrl: string;

  beforeAll(async () => {
    foreign = await recordingServer((req, res) => answerMcp(req, res, 'foreign'));
    app = await recordingServer((req, res) => {
      const [path] = req.url.split('?');
      const to = (status: number, location: string) =>
        res.writeHead(status, { location }).end('moved');
      if (path === '/cross') return to(307, `http://localhost:${foreign.port}/mcp`);
      if (path === '/cross-port') return to(308, `http://127.0.0.1:${foreign.port}/mcp`);
      if (path === '/same') return to(307, '/mcp');
      if (path === '/same-303') return to(303, '/mcp');
      if (path === '/late') {
        // The session starts here; every later request is sent to the foreign origin.
        const opening =
          req.method === 'POST' &&
          (req.body.includes('"initialize"') || req.body.includes('notifications/initialized'));
        if (opening) return answerMcp(req, res, 'app');
        return to(307, `http://localhost:${foreign.port}/mcp`);
      }
      if (path === '/mcp') return answerMcp(req, res, 'app');
      res.writeHead(404).end();
    });
    appUrl = `http://127.0.0.1:${app.port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => app.server.close(resolve));
    await new Promise((resolve) => foreign.server.close(resolve));
  });
  beforeEach(() => {
    app.received.length = 0;
    foreign.received.length = 0;
  });

  const env = (credential: Record<string, string>) => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    ...credential,
  });
  const connect = (path: string, credential: Record<string, string>) =>
    runCliWithInput(['connect', `${appUrl}${path}`], env(credential), LINES);

  /** Nothing at all reached the foreign origin, and the credential is nowhere in what it got. */
  const expectForeignUntouched = (secret: string) => {
    expect(foreign.received).toEqual([]);
    expect(JSON.stringify(foreign.received)).not.toContain(secret);
  };

  it.each([
    ['the operator key', '/cross', { MCP_API_KEY: apiKey }, apiKey],
    ['a session token', '/cross', { PARSE_SESSION_TOKEN: sessionToken }, sessionToken],
    ['the operator key, same host on another port', '/cross-port', { MCP_API_KEY: apiKey }, apiKey],
  ])(
    'refuses a cross-origin redirect and sends %s nowhere else (%s)',
    async (_what, path, credential, secret) => {
      const run = await connect(path, credential);
      expectForeignUntouched(secret);
      const [initialize] = answers(run).filter((answer) => answer.id === 1);
      expect(initialize.result).toBeUndefined();
      expect(initialize.error?.message).toMatch(
        /redirected \(HTTP 30[78]\) to another origin, http:\/\/(localhost|127\.0\.0\.1):\d+\. The bridge never sends its credential to another origin/,
      );
      expect(run.stdout).not.toContain('foreign');
      expect(run.code).toBe(0);
    },
  );

  it('keeps a session it started from being carried to another origin (POST, GET stream, DELETE)', async () => {
    const run = await connect('/late', { MCP_API_KEY: apiKey });
    expectForeignUntouched(apiKey);
    const byId = new Map(answers(run).map((answer) => [answer.id, answer]));
    expect(byId.get(1)?.result).toMatchObject({ serverInfo: { name: 'app' } });
    expect(byId.get(2)?.error?.message).toMatch(/to another origin/);
    expect(run.stdout).not.toContain('foreign');
    // The bridge tried the app itself for the later requests, and only the app.
    expect(app.received.map((r) => r.method)).toEqual(
      expect.arrayContaining(['POST', 'GET', 'DELETE']),
    );
  });

  it('follows a same-origin 307 with the credential and the body', async () => {
    const run = await connect('/same', { MCP_API_KEY: apiKey });
    const byId = new Map(answers(run).map((answer) => [answer.id, answer]));
    expect(byId.get(1)?.result).toMatchObject({ serverInfo: { name: 'app' } });
    expect(byId.get(2)?.result).toEqual({ tools: [expect.objectContaining({ name: 'app_tool' })] });
    const atEndpoint = app.received.filter((r) => r.url === '/mcp' && r.method === 'POST');
    expect(atEndpoint.length).toBeGreaterThanOrEqual(3);
    for (const request of atEndpoint) expect(request.headers['x-mcp-api-key']).toBe(apiKey);
    expectForeignUntouched(apiKey);
  });

  it('refuses a same-origin 303 for a POST instead of dropping the message', async () => {
    const run = await connect('/same-303', { MCP_API_KEY: apiKey });
    const [initialize] = answers(run).filter((answer) => answer.id === 1);
    expect(initialize.error?.message).toMatch(
      /redirected a POST with HTTP 303, .* Connect to http:\/\/127\.0\.0\.1:\d+\/mcp directly/,
    );
    expect(app.received.filter((r) => r.url === '/mcp')).toEqual([]);
  });

  it('refuses plain http to another host unless --allow-insecure-http is given', async () => {
    const refused = await runCliWithInput(
      ['connect', 'http://app.example.invalid/mcp'],
      env({ MCP_API_KEY: apiKey }),
      '',
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /Refusing plain http to app\.example\.invalid: .*--allow-insecure-http/,
    );
    expect(refused.stderr).not.toContain(apiKey);
  });
});
