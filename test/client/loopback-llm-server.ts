import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted model turn the loopback server answers with. */
export interface ScriptedReply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown> | string }>;
  usage?: { input: number; output: number };
  /** Answer with this HTTP status and error body instead. */
  status?: number;
  /** Never answer: for cancellation tests. */
  hang?: boolean;
}

export type ReplyScript = (body: Record<string, unknown>, index: number) => ScriptedReply;

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Resolves when the client dropped the connection before the answer was complete. */
  closedEarly: Promise<void>;
}

export interface LoopbackLlmServer {
  baseURL: string;
  requests: RecordedRequest[];
  /** Resolves when the n-th request (1-based) has arrived. */
  requestArrived(n: number): Promise<RecordedRequest>;
  close(): Promise<void>;
}

export type Answer = (
  reply: ScriptedReply,
  body: Record<string, unknown>,
  res: ServerResponse,
) => void;

/**
 * A real HTTP server on 127.0.0.1 (port 0) that answers like an LLM provider's API, so the official
 * SDKs can be pointed at it with `baseURL`. `answer` writes the provider's wire format.
 */
export async function startLoopbackLlmServer(
  pathSuffix: string,
  basePath: string,
  script: ReplyScript | ScriptedReply[],
  answer: Answer,
): Promise<LoopbackLlmServer> {
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ n: number; resolve: (r: RecordedRequest) => void }> = [];
  const next: ReplyScript = Array.isArray(script)
    ? (_body, i) => script[Math.min(i, script.length - 1)]
    : script;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let onClosedEarly!: () => void;
      const closedEarly = new Promise<void>((resolve) => (onClosedEarly = resolve));
      res.on('close', () => {
        if (!res.writableFinished) onClosedEarly();
      });
      if (req.method !== 'POST' || !req.url?.endsWith(pathSuffix)) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      const record: RecordedRequest = { path: req.url, headers: req.headers, body, closedEarly };
      requests.push(record);
      for (const w of waiters.filter((w) => w.n === requests.length)) w.resolve(record);
      const reply = next(body, requests.length - 1);
      if (reply.hang) return;
      if (reply.status && reply.status >= 400) {
        res.writeHead(reply.status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { type: 'error', message: reply.text ?? 'scripted failure' } }),
        );
        return;
      }
      answer(reply, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${basePath}`,
    requests,
    requestArrived: (n) =>
      requests.length >= n
        ? Promise.resolve(requests[n - 1])
        : new Promise((resolve) => waiters.push({ n, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function argumentsText(args: Record<string, unknown> | string): string {
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/** Splits a string in two, so streamed arguments arrive in pieces as they do from real APIs. */
export function halves(text: string): string[] {
  const mid = Math.floor(text.length / 2);
  return [text.slice(0, mid), text.slice(mid)].filter(Boolean);
}
