import * as http from 'node:http';
import * as https from 'node:https';
import {
  AgentCancelledError,
  ParseAgentConfigError,
  ParseRequestError,
  quotingUntrusted,
} from '../../core/errors';
import { INSPECT, inspectAs } from '../../core/secret-display';
import type { ParseSchema } from '../../core/parse-schema';
import { handOverRows } from '../handed-over-rows';
import type { DataFindQuery } from '../../ports/data-path';

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
   * The check runs every quarter of this time (at most every second), so a request fails within
   * that much after the limit.
   */
  requestTimeoutMs?: number;
}

export const DEFAULT_PARSE_REQUEST_TIMEOUT_MS = 15_000;

/** Who a request runs as: a user's session (Parse enforces ACL/CLP/protectedFields) or the master key. */
export type ParseAuth = { sessionToken: string } | { masterKey: true };

export type ParseRow = Record<string, unknown>;

/** Parse Server's answer: its status and parsed body (undefined: the body was not JSON). */
interface ParseAnswer {
  status: number;
  json: Record<string, unknown> | undefined;
}

/** An empty body reads as `{}`; a body that is not JSON as undefined. */
function parseAnswer(status: number, raw: Buffer): ParseAnswer {
  if (raw.length === 0) return { status, json: {} };
  try {
    return { status, json: JSON.parse(raw.toString('utf8')) as Record<string, unknown> };
  } catch {
    return { status, json: undefined };
  }
}

/**
 * Parse REST over fetch. Reads go out as POST with `_method: GET` (no URL length limit, same
 * semantics), every call takes an AbortSignal so a cancelled or timed-out tool stops its I/O, and
 * Parse errors come back as ParseRequestError with Parse's code.
 */
export class ParseRestClient {
  protected readonly baseURL: string;
  protected readonly agent: http.Agent;
  protected readonly timeoutMs: number;
  /** Requests waiting for Parse Server, for the idle-timeout sweep. */
  protected readonly inFlight = new Set<PendingRequest>();
  protected sweeper?: NodeJS.Timeout;
  protected readonly target: {
    transport: typeof http | typeof https;
    protocol: string;
    hostname: string;
    port: string;
    basePath: string;
  };

  constructor(protected readonly options: ParseConnectionOptions) {
    this.baseURL = options.serverURL.replace(/\/+$/, '');
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_PARSE_REQUEST_TIMEOUT_MS;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new ParseAgentConfigError(
        `parse.requestTimeoutMs must be a positive number of milliseconds (got ${JSON.stringify(timeoutMs)}).`,
      );
    }
    this.timeoutMs = timeoutMs;
    let url: URL;
    try {
      url = new URL(this.baseURL);
    } catch {
      throw new ParseAgentConfigError(
        `parse.serverURL must be an absolute http(s) URL (got ${JSON.stringify(options.serverURL)}).`,
      );
    }
    const secure = url.protocol === 'https:';
    // Parsed once: every request reuses the pieces instead of parsing a URL per call.
    this.target = {
      transport: secure ? https : http,
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port,
      basePath: url.pathname.replace(/\/+$/, ''),
    };
    const Agent = secure ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 128 });
  }

  /**
   * One HTTP exchange on a keep-alive socket (node:http rather than fetch: markedly less overhead per
   * call). The signal destroys the socket, so an aborted call stops its I/O. The body is parsed as
   * soon as it ends: its text is garbage at once instead of being held by the promise and the
   * caller's frame (both older than the answer) until the next full collection.
   */
  protected send(
    method: string,
    path: string,
    headers: Record<string, string>,
    payload: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
    const body = payload === undefined ? undefined : JSON.stringify(payload);
    if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body, 'utf8'));
    const target = this.target;
    const attempt = (mayRetry: boolean): Promise<ParseAnswer> =>
      new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(new Error('aborted before sending'));
        const options: http.RequestOptions = {
          protocol: target.protocol,
          hostname: target.hostname,
          port: target.port,
          path: target.basePath + path,
          method,
          headers,
          agent: this.agent,
        };
        let settled = false;
        let answered = false;
        const settle = (error: Error | undefined, value?: ParseAnswer) => {
          if (settled) return;
          settled = true;
          this.inFlight.delete(pending);
          signal?.removeEventListener('abort', onAbort);
          if (error && mayRetry && !answered && staleKeepAlive(req, error, signal)) {
            // The server closed this idle keep-alive socket as we reused it (its keepAliveTimeout
            // raced our send): nothing was answered, so the request goes once more on a new socket.
            resolve(attempt(false));
          } else if (error) reject(error);
          else resolve(value!);
        };
        const req = target.transport.request(options, (res) => {
          answered = true;
          res.on('error', (error) => settle(error));
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
            chunks.length = 0;
            settle(undefined, parseAnswer(res.statusCode ?? 0, raw));
          });
          res.on('aborted', () => settle(new Error('response aborted')));
        });
        const pending: PendingRequest = { req, lastActivity: Date.now(), bytesRead: -1 };
        req.once('socket', (socket) => {
          pending.bytesRead = socket.bytesRead;
          pending.lastActivity = Date.now();
        });
        // Aborting destroys the socket (never back to the pool), so the call's I/O really stops.
        // Wired by hand: the request option `signal` costs a set of stream listeners per call.
        function onAbort() {
          req.destroy(new Error('aborted'));
        }
        signal?.addEventListener('abort', onAbort, { once: true });
        this.track(pending);
        req.on('error', (error) => settle(error));
        req.on('close', () => settle(new Error('connection closed before the answer')));
        req.end(body);
      });
    return attempt(true);
  }

  /**
   * An upstream that accepts and then sends nothing for `requestTimeoutMs` loses its socket (never
   * back to the pool). One sweep for all requests in flight, instead of a socket timer per request
   * re-armed on every chunk: it runs every quarter of the timeout (at most every second) while
   * anything is in flight, counts any byte the socket received as activity, and so cuts a silent
   * request off within that much after the limit. A request still waiting for a free socket
   * (`maxSockets`) is not timed: Parse Server has not seen it yet.
   */
  protected track(pending: PendingRequest): void {
    this.inFlight.add(pending);
    if (this.sweeper) return;
    const every = Math.max(10, Math.min(1_000, Math.floor(this.timeoutMs / 4)));
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const entry of this.inFlight) {
        const socket = entry.req.socket;
        if (!socket || entry.bytesRead === -1) {
          entry.lastActivity = now;
          continue;
        }
        if (socket.bytesRead !== entry.bytesRead) {
          entry.bytesRead = socket.bytesRead;
          entry.lastActivity = now;
          continue;
        }
        if (now - entry.lastActivity < this.timeoutMs) continue;
        this.inFlight.delete(entry);
        entry.req.destroy(new ParseTimeoutError(this.timeoutMs));
      }
      if (this.inFlight.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, every);
    this.sweeper.unref();
  }

  /** Closes idle keep-alive sockets (on module shutdown). */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.agent.destroy();
  }

  get serverURL(): string {
    return this.baseURL;
  }

  /** Printed without the keys it holds, nor its sockets (whose pending requests carry them). */
  [INSPECT](
    _depth: number,
    options: object,
    inspect: (value: unknown, options?: object) => string,
  ): string {
    return inspectAs('ParseRestClient', this.toJSON(), options, inspect);
  }

  toJSON(): Record<string, unknown> {
    return { serverURL: this.baseURL, appId: this.options.appId, masterKey: '[hidden]' };
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
    let response: ParseAnswer;
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
    const json = response.json;
    if (json === undefined) {
      throw new ParseRequestError(
        `Parse error: Parse Server answered ${response.status} with a non-JSON body.`,
        undefined,
        response.status,
      );
    }
    if (response.status < 200 || response.status >= 300) {
      const code = typeof json.code === 'number' ? json.code : undefined;
      if (typeof json.error !== 'string') {
        throw new ParseRequestError(`Parse error: HTTP ${response.status}`, code, response.status);
      }
      // Parse's text can quote stored values (a Cloud Code trigger's message, say): marked.
      throw quotingUntrusted(
        new ParseRequestError(`Parse error: ${json.error}`, code, response.status),
        `Parse Server refused the request (HTTP ${response.status}${code === undefined ? '' : `, code ${code}`}); its message:`,
      );
    }
    return json as T;
  }

  async find(
    className: string,
    query: DataFindQuery,
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
    // Parsed from this answer alone: the reader may empty the array once it has redacted it.
    return handOverRows(res.results ?? []);
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
    query: Pick<DataFindQuery, 'keys' | 'include'>,
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

  async create(
    className: string,
    values: Record<string, unknown>,
    auth: ParseAuth,
    signal?: AbortSignal,
  ): Promise<{ objectId: string; createdAt?: string }> {
    return this.request('POST', `/classes/${encodeURIComponent(className)}`, values, auth, signal);
  }

  async update(
    className: string,
    objectId: string,
    values: Record<string, unknown>,
    auth: ParseAuth,
    signal?: AbortSignal,
  ): Promise<{ updatedAt?: string }> {
    return this.request(
      'PUT',
      `/classes/${encodeURIComponent(className)}/${encodeURIComponent(objectId)}`,
      values,
      auth,
      signal,
    );
  }

  async delete(
    className: string,
    objectId: string,
    auth: ParseAuth,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.request(
      'DELETE',
      `/classes/${encodeURIComponent(className)}/${encodeURIComponent(objectId)}`,
      undefined,
      auth,
      signal,
    );
  }

  /** Schema changes always need the master key (Parse allows nothing else). */
  async createClass(
    className: string,
    spec: { fields: Record<string, unknown>; classLevelPermissions?: Record<string, unknown> },
    signal?: AbortSignal,
  ): Promise<void> {
    await this.request(
      'POST',
      `/schemas/${encodeURIComponent(className)}`,
      { className, ...spec },
      { masterKey: true },
      signal,
    );
  }

  async deleteClass(className: string, signal?: AbortSignal): Promise<void> {
    await this.request(
      'DELETE',
      `/schemas/${encodeURIComponent(className)}`,
      undefined,
      { masterKey: true },
      signal,
    );
  }

  /**
   * The CLP principals of a session: `*`, the user's objectId and every role it holds, inherited
   * roles included (a role's members also hold the roles that list it in their `roles` relation).
   */
  async sessionPrincipals(sessionToken: string, signal?: AbortSignal): Promise<string[]> {
    const me = await this.request<{ objectId: string }>(
      'GET',
      '/users/me',
      undefined,
      { sessionToken },
      signal,
    );
    const master = { masterKey: true } as const;
    const names = new Set<string>();
    let frontier = await this.find(
      '_Role',
      {
        where: { users: { __type: 'Pointer', className: '_User', objectId: me.objectId } },
        keys: ['name'],
        limit: 1000,
      },
      master,
      signal,
    );
    for (let depth = 0; frontier.length && depth < 10; depth++) {
      const fresh = frontier.filter((r) => typeof r.name === 'string' && !names.has(r.name));
      for (const role of fresh) names.add(role.name as string);
      if (!fresh.length) break;
      frontier = await this.find(
        '_Role',
        {
          where: {
            roles: {
              $in: fresh.map((r) => ({
                __type: 'Pointer',
                className: '_Role',
                objectId: r.objectId,
              })),
            },
          },
          keys: ['name'],
          limit: 1000,
        },
        master,
        signal,
      );
    }
    return ['*', me.objectId, ...[...names].sort().map((n) => `role:${n}`)];
  }

  /** Parse's `/aggregate` (master key only: Parse applies no ACL, CLP or protectedFields there). */
  async aggregate(
    className: string,
    pipeline: Record<string, unknown>[],
    signal?: AbortSignal,
  ): Promise<ParseRow[]> {
    const res = await this.request<{ results: ParseRow[] }>(
      'GET',
      `/aggregate/${encodeURIComponent(className)}`,
      { pipeline },
      { masterKey: true },
      signal,
    );
    return res.results ?? [];
  }

  /** Distinct values of a field through `/aggregate?distinct=` (master key only; correct on both backends). */
  async distinct(
    className: string,
    field: string,
    where: Record<string, unknown> | undefined,
    signal?: AbortSignal,
  ): Promise<unknown[]> {
    const body: Record<string, unknown> = { distinct: field };
    if (where && Object.keys(where).length) body.where = where;
    const res = await this.request<{ results: unknown[] }>(
      'GET',
      `/aggregate/${encodeURIComponent(className)}`,
      body,
      { masterKey: true },
      signal,
    );
    return res.results ?? [];
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

  /** One class's schema, read now with the master key (no cache); undefined when it does not exist. */
  async schema(className: string, signal?: AbortSignal): Promise<ParseSchema | undefined> {
    try {
      return await this.request<ParseSchema>(
        'GET',
        `/schemas/${encodeURIComponent(className)}`,
        undefined,
        { masterKey: true },
        signal,
      );
    } catch (error) {
      // Parse answers 103 (invalid class name) for a class that does not exist.
      if (error instanceof ParseRequestError && error.parseCode === 103) return undefined;
      throw error;
    }
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

interface PendingRequest {
  req: http.ClientRequest;
  /** When the request got its socket, or when the sweep last saw bytes arrive on it. */
  lastActivity: number;
  /** The socket's byte count at that moment (-1 until the request has a socket). */
  bytesRead: number;
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

/**
 * A reused keep-alive socket reset before any answer: the server had closed it as idle. Node's
 * documentation gives this case (`request.reusedSocket`) as the one to retry.
 */
function staleKeepAlive(req: http.ClientRequest, error: Error, signal?: AbortSignal): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return req.reusedSocket && !signal?.aborted && (code === 'ECONNRESET' || code === 'EPIPE');
}
