import type { ServerResponse } from 'node:http';
import { ABORTED, readLimited, type DeferredBody } from './bounded-read';
import { parseBoundedJson, valueNestingDepth } from '../shared/bounded-json';
import { bodyKind, invalidRequestProblem, validIdOf, type McpBodyKind } from './json-rpc-shape';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import { sendJsonRpcError } from './mcp-http-response';
import type { McpRequest } from './mcp-request';
import type { TransportLogger } from '../shared/transport-logger';

/** A POST body that passed the checks: the JSON-RPC message and what kind of message it is. */
export type ParsedMcpBody = { body: Record<string, unknown>; kind: McpBodyKind };

/** Refuses invalid UTF-8; shared, since a decode without `stream` keeps no state between calls. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The gate's body half: reads a POST body with the size caps (the pre-auth one before the guards,
 * `maxBodyBytes` after), decodes strict UTF-8, parses JSON with the depth cap and checks the
 * JSON-RPC shape. Every method answers its own refusal and resolves undefined then.
 */
export class McpBodyReader {
  constructor(
    private readonly options: ResolvedMcpEndpointOptions,
    private readonly logger: TransportLogger,
  ) {}

  /**
   * Size cap, JSON parse with depth cap, then the JSON-RPC shape (a method, or a client response).
   * Before authentication only `preAuthMaxBodyBytes` are read: a larger body is refused at once
   * when the request carries no credentials, else deferred until the caller is authenticated.
   */
  async read(
    req: McpRequest,
    res: ServerResponse,
    authenticated: boolean,
  ): Promise<ParsedMcpBody | { deferred: DeferredBody } | undefined> {
    const max = this.options.maxBodyBytes;
    const preParsed = preParsedBody(req);
    if (
      preParsed.present &&
      !(typeof preParsed.value === 'string' || Buffer.isBuffer(preParsed.value))
    ) {
      // Another parser consumed the stream first: apply the same limits to what it produced.
      const value = preParsed.value ?? {};
      if (Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8') > max)
        return void this.tooLarge(res, max);
      if (valueNestingDepth(value, this.options.maxJsonDepth) > this.options.maxJsonDepth)
        return void this.invalidJson(res);
      return this.shapeOf(value, res);
    }
    if (preParsed.present) {
      const raw = Buffer.isBuffer(preParsed.value)
        ? preParsed.value
        : Buffer.from(String(preParsed.value ?? ''), 'utf8');
      if (raw.length > max) return void this.tooLarge(res, max);
      return this.parse(raw, res);
    }

    const limit = authenticated ? max : this.options.preAuthMaxBodyBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      req.resume(); // discard, never buffer
      return void this.tooLarge(res, max);
    }
    if (limit < max && Number.isFinite(declared) && declared > limit) {
      // Nothing read yet: decide from the headers alone.
      if (!(await this.mayDefer(req))) return void this.tooLargeAnonymous(res, limit);
      return { deferred: { prefix: [], size: 0 } };
    }
    const read = await readLimited(req, limit, limit < max ? 'pause' : 'discard');
    if (read === ABORTED) return void this.aborted(res);
    if (Buffer.isBuffer(read)) return this.parse(read, res);
    if (read && (await this.mayDefer(req))) return { deferred: read };
    if (read) req.resume(); // refused: discard the rest
    return limit < max ? void this.tooLargeAnonymous(res, limit) : void this.tooLarge(res, max);
  }

  /**
   * Reads the rest of a deferred body (the caller is authenticated now), up to `maxBodyBytes` in
   * all, then parses and checks it like any body.
   */
  async complete(
    req: McpRequest,
    deferred: DeferredBody,
    res: ServerResponse,
  ): Promise<ParsedMcpBody | undefined> {
    if (deferred.contentType !== undefined) req.headers['content-type'] = deferred.contentType;
    if (deferred.size > this.options.maxBodyBytes) {
      req.resume();
      return void this.tooLarge(res, this.options.maxBodyBytes);
    }
    const rest = await readLimited(req, this.options.maxBodyBytes - deferred.size);
    if (rest === ABORTED) return void this.aborted(res);
    if (!rest) return void this.tooLarge(res, this.options.maxBodyBytes);
    // Read in full: the connection may be kept alive again.
    res.removeHeader('Connection');
    return this.parse(Buffer.concat([...deferred.prefix, rest]), res);
  }

  /** Whether a body over the pre-auth limit may wait for the guards (the host's hook decides). */
  private async mayDefer(req: McpRequest): Promise<boolean> {
    try {
      return (await this.options.preAuthenticate(req)) === true;
    } catch (error) {
      // Fail closed: a broken hook refuses large bodies, never lets them be buffered.
      this.logger.warn(
        `preAuthenticate failed (${error instanceof Error ? error.constructor.name : typeof error}); the request is treated as carrying no credentials`,
      );
      return false;
    }
  }

  private parse(raw: Buffer, res: ServerResponse): ParsedMcpBody | undefined {
    let text: string;
    try {
      text = STRICT_UTF8.decode(raw);
    } catch {
      return void this.invalidJson(res);
    }
    const parsed = parseBoundedJson(text, this.options.maxJsonDepth);
    if (!parsed.ok) return void this.invalidJson(res);
    return this.shapeOf(parsed.value, res);
  }

  private shapeOf(value: unknown, res: ServerResponse): ParsedMcpBody | undefined {
    const kind = bodyKind(value);
    if (!kind) {
      const problem = invalidRequestProblem(value);
      sendJsonRpcError(res, 400, -32600, `Invalid Request${problem ? `: ${problem}` : ''}`, {
        id: validIdOf(value),
      });
      return undefined;
    }
    return { body: value as Record<string, unknown>, kind };
  }

  private tooLarge(res: ServerResponse, max: number): void {
    sendJsonRpcError(res, 413, -32700, `Payload Too Large: body exceeds ${max} bytes`, {
      headers: { Connection: 'close' },
    });
  }

  private tooLargeAnonymous(res: ServerResponse, limit: number): void {
    this.logger.warn(`Body over ${limit} bytes without credentials refused before reading it`);
    sendJsonRpcError(
      res,
      413,
      -32700,
      `Payload Too Large: a request without credentials may carry at most ${limit} bytes`,
      { headers: { Connection: 'close' } },
    );
  }

  private invalidJson(res: ServerResponse): void {
    sendJsonRpcError(res, 400, -32700, 'Parse error: invalid JSON');
  }

  /** The client went away mid-upload: nothing to answer and nothing worth a stack trace. */
  private aborted(res: ServerResponse): void {
    this.logger.warn('MCP request body aborted by the client before it was complete');
    if (!res.writableEnded) res.destroy();
  }
}

/** A body another parser already read (Express's, Fastify's): present, with what it produced. */
function preParsedBody(req: McpRequest): { present: boolean; value?: unknown } {
  if (req._body === true || req.readableEnded) return { present: true, value: req.body };
  return { present: false };
}
