import http from 'node:http';
import https from 'node:https';
import { AgentCancelledError, ParseAgentConfigError, ParseRequestError } from '../../core/errors';
import type { ParseSchema } from '../../core/parse-schema';

export interface ParseConnectionOptions {
  serverURL: string;
  /** Concurrent connections to Parse Server (default 128). */
  maxSockets?: number;
  appId: string;
  masterKey: string;
  javascriptKey?: string;
  /**
   * How long one request may wait for Parse Server without receiving anything (default 15 000 ms).
   * A request that times out fails with a clear error and its socket is destroyed, never reused.
   */
  requestTimeoutMs?: number;
}

export const DEFAULT_PARSE_REQUEST_TIMEOUT_MS = 15_000;

/** Who a request runs as: a user's session (Parse enforces ACL/CLP/protectedFields) or the master key. */
export type ParseAuth = { sessionToken: string } | { masterKey: true };

export interface FindOptions {
  where?: Record<string, unknown>;
  keys?: string[];
  include?: string[];
  order?: string;
  limit?: number;
  skip?: number;
}

export type ParseRow = Record<string, unknown>;

/**
 * Parse REST over fetch. Reads go out as POST with `_method: GET` (no URL length limit, same
 * semantics), every call takes an AbortSignal so a cancelled or timed-out tool stops its I/O, and
 * Parse errors come back as ParseRequestError with Parse's code.
 */
export class ParseRestClient {
  protected readonly baseURL: string;
  protected readonly agent: http.Agent;
  protected readonly timeoutMs: number;

  constructor(protected readonly options: ParseConnectionOptions) {
    this.baseURL = options.serverURL.replace(/\/+$/, '');
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_PARSE_REQUEST_TIMEOUT_MS;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new ParseAgentConfigError(
        `parse.requestTimeoutMs must be a positive number of milliseconds (got ${JSON.stringify(timeoutMs)}).`,
      );
    }
    this.timeoutMs = timeoutMs;
    const Agent = this.baseURL.startsWith('https:') ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 128 });
  }

  /**
   * One HTTP exchange on a keep-alive socket (node:http rather than fetch: markedly less overhead per
   * call). The signal destroys the socket, so an aborted call stops its I/O.
   */
  protected send(
    method: string,
    path: string,
    headers: Record<string, string>,
    payload: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<{ status: number; text: string }> {
    const body = payload === undefined ? undefined : Buffer.from(JSON.stringify(payload));
    if (body) headers['Content-Length'] = String(body.length);
    const url = new URL(this.baseURL + path);
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(url, { method, headers, agent: this.agent, signal }, (res) => {
        res.on('error', reject);
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('aborted', () => reject(new Error('response aborted')));
      });
      // An upstream that accepts and then goes quiet: destroy the socket (never back to the pool).
      req.setTimeout(this.timeoutMs, () => req.destroy(new ParseTimeoutError(this.timeoutMs)));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Closes idle keep-alive sockets (on module shutdown). */
  close(): void {
    this.agent.destroy();
  }

  get serverURL(): string {
    return this.baseURL;
  }

  async request<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body: Record<string, unknown> | undefined,
    auth: ParseAuth,
    signal?: AbortSignal,
  ): Promise<T> {
    const headers: Record<string, string> = {
      'X-Parse-Application-Id': this.options.appId,
      'Content-Type': 'application/json',
    };
    if (this.options.javascriptKey) headers['X-Parse-JavaScript-Key'] = this.options.javascriptKey;
    if ('masterKey' in auth) headers['X-Parse-Master-Key'] = this.options.masterKey;
    else headers['X-Parse-Session-Token'] = auth.sessionToken;
    let httpMethod: string = method;
    let payload = body;
    if (method === 'GET') {
      httpMethod = 'POST';
      payload = { ...(body ?? {}), _method: 'GET' };
    }
    let response: { status: number; text: string };
    try {
      response = await this.send(httpMethod, path, headers, payload, signal);
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      if (error instanceof ParseTimeoutError) {
        throw new ParseRequestError(
          `Parse error: Parse Server did not answer within ${error.timeoutMs} ms.`,
        );
      }
      // The error code only: the message would tell the agent Parse Server's internal address.
      const code = (error as { code?: unknown }).code;
      throw new ParseRequestError(
        `Parse error: Parse Server is unreachable${typeof code === 'string' ? ` (${code})` : ''}.`,
      );
    }
    const text = response.text;
    let json: Record<string, unknown> = {};
    if (text) {
      try {
        json = JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw new ParseRequestError(
          `Parse error: Parse Server answered ${response.status} with a non-JSON body.`,
          undefined,
          response.status,
        );
      }
    }
    if (response.status < 200 || response.status >= 300) {
      throw new ParseRequestError(
        `Parse error: ${typeof json.error === 'string' ? json.error : `HTTP ${response.status}`}`,
        typeof json.code === 'number' ? json.code : undefined,
        response.status,
      );
    }
    return json as T;
  }

  async find(
    className: string,
    query: FindOptions,
    auth: ParseAuth,
    signal?: AbortSignal,
  ): Promise<ParseRow[]> {
    const body: Record<string, unknown> = { where: query.where ?? {} };
    if (query.keys?.length) body.keys = query.keys.join(',');
    if (query.include?.length) body.include = query.include.join(',');
    if (query.order) body.order = query.order;
    if (query.limit !== undefined) body.limit = query.limit;
    if (query.skip) body.skip = query.skip;
    const res = await this.request<{ results: ParseRow[] }>(
      'GET',
      `/classes/${encodeURIComponent(className)}`,
      body,
      auth,
      signal,
    );
    return res.results ?? [];
  }

  /**
   * An exact count. An unconstrained count on PostgreSQL is answered from the planner's estimate,
   * so an always-true constraint is added when the where is empty.
   */
  async count(
    className: string,
    where: Record<string, unknown>,
    auth: ParseAuth,
    signal?: AbortSignal,
  ): Promise<number> {
    const effective = Object.keys(where).length ? where : { objectId: { $exists: true } };
    const res = await this.request<{ count: number }>(
      'GET',
      `/classes/${encodeURIComponent(className)}`,
      { where: effective, count: 1, limit: 0 },
      auth,
      signal,
    );
    return res.count;
  }

  async get(
    className: string,
    objectId: string,
    query: Pick<FindOptions, 'keys' | 'include'>,
    auth: ParseAuth,
    signal?: AbortSignal,
  ): Promise<ParseRow> {
    const body: Record<string, unknown> = {};
    if (query.keys?.length) body.keys = query.keys.join(',');
    if (query.include?.length) body.include = query.include.join(',');
    return this.request<ParseRow>(
      'GET',
      `/classes/${encodeURIComponent(className)}/${encodeURIComponent(objectId)}`,
      body,
      auth,
      signal,
    );
  }

  /** Schemas need the master key; callers decide what of them an agent may see. */
  async schemas(signal?: AbortSignal): Promise<ParseSchema[]> {
    const res = await this.request<{ results: ParseSchema[] }>(
      'GET',
      '/schemas',
      undefined,
      { masterKey: true },
      signal,
    );
    return res.results ?? [];
  }

  async health(signal?: AbortSignal): Promise<boolean> {
    const res = await this.request<{ status?: string }>(
      'GET',
      '/health',
      undefined,
      { masterKey: true },
      signal,
    );
    return res.status === 'ok';
  }
}

class ParseTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason;
  return new AgentCancelledError();
}
