import { Observable } from 'rxjs';
import { linkedAbort, type LinkedAbort } from '../core/linked-abort';
import {
  AccessDeniedError,
  AgentCancelledError,
  AgentUnauthorizedError,
  AgentValidationError,
  InvalidQueryError,
  ParseAgentConfigError,
  RateLimiterUnavailableError,
  SecurityBlockedError,
} from '../core/errors';
import type { ParseAgent } from '../agent/parse-agent';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import { MAX_TOOL_RESPONSE_BYTES } from '../format/response-size-cap';
import { isPlainObject } from '../core/plain-object';
import type { ProgressUpdate } from '../tools/tool-context';
import type { ToolRegistry } from '../tools/tool-registry';
import { unknownToolError } from '../tools/unknown-tool';
import type {
  DispatchContext,
  DispatchLogger,
  DispatchMessage,
  JsonRpcId,
  JsonRpcNotification,
  McpServerInfo,
} from './mcp-dispatcher.types';
import { McpMethodError } from './mcp-method-error';
import { listResources, listResourceTemplates, readResource } from './mcp-resources';
import { McpNotifier } from './mcp-notifier';
import { subscribeResource, unsubscribeResource } from './resource-subscribe';
import type {
  ResourceSubscriptionService,
  SubscribingSession,
} from './resource-subscriptions.types';
import type { PromptRegistry } from './prompt-registry';
import {
  DEFAULT_SERVER_INFO,
  JSON_RPC_ERROR_CODES as CODES,
  negotiateProtocolVersion,
  serverCapabilities,
} from './protocol.constants';
import { withPreserializedJson } from './preserialized';
import { serverInstructions } from './server-instructions';
import { assertAuthorized, assertLimiterAvailable, toCallToolResult } from './tool-call-result';

export interface McpDispatcherOptions {
  /** Reported by `initialize`; defaults to this package's name and version. */
  serverInfo?: McpServerInfo;
  /** Largest tool result text sent in one response (default 4 MiB). */
  maxResponseBytes?: number;
  /** Wrap tool result text as untrusted data (default true; structuredContent is unchanged). */
  wrapUntrustedData?: boolean;
}

/** The last item of every dispatch. */
export type DispatchTerminal = Exclude<DispatchMessage, { kind: 'notification' }>;

/** What a method handler gets besides its params. */
export interface McpCallContext {
  agent: ParseAgent;
  /** Aborted by the caller's signal or when the subscriber unsubscribes before the end. */
  signal: AbortSignal;
  /** Sends a notification ahead of the response (ignored once the response is out). */
  notify(message: JsonRpcNotification): void;
  /** The way back to the human for this call, when the transport has one (elicitation). */
  elicitation?: ElicitationChannel;
  /** The request's session, when the transport has sessions (resource subscriptions). */
  session?: SubscribingSession;
}

export type McpMethodHandler = (params: Record<string, unknown>, call: McpCallContext) => unknown;

const ACCEPTED: DispatchTerminal = { kind: 'accepted' };

/**
 * The MCP JSON-RPC dispatcher, free of HTTP and Nest: a parsed request body and an agent go in, an
 * Observable of messages comes out (progress notifications first, then exactly one response or
 * `accepted`). It never throws and the Observable never errors: tool failures are `isError`
 * results, protocol problems are JSON-RPC errors, `AgentUnauthorizedError` anywhere becomes the
 * fixed 401 answer, and anything unexpected becomes "Internal error" with the details going only
 * to the logger. Nothing runs until subscription; unsubscribing early cancels the tool call.
 */
export class McpDispatcher {
  protected readonly serverInfo: McpServerInfo;
  protected readonly maxResponseBytes: number;
  protected readonly wrapUntrustedData: boolean;
  protected readonly handlers: ReadonlyMap<string, McpMethodHandler>;

  /** tools/list results by tool set, each serialized once. */
  protected readonly toolListCache = new Map<string, object>();

  /** Pushes notifications to the listening streams of this node's sessions (McpNotifier). */
  readonly notifier = new McpNotifier();

  /** Resource subscriptions (the `liveQuery` option); without them subscribe is not a method. */
  protected resourceSubscriptions?: ResourceSubscriptionService;

  constructor(
    protected readonly tools: ToolRegistry,
    protected readonly prompts: PromptRegistry,
    options: McpDispatcherOptions = {},
  ) {
    const { serverInfo = DEFAULT_SERVER_INFO, maxResponseBytes = MAX_TOOL_RESPONSE_BYTES } =
      options;
    if (!Number.isInteger(maxResponseBytes) || maxResponseBytes <= 0) {
      throw new ParseAgentConfigError(
        `maxResponseBytes must be a positive integer number of bytes (got ${String(maxResponseBytes)}).`,
      );
    }
    if (typeof serverInfo?.name !== 'string' || typeof serverInfo.version !== 'string') {
      throw new ParseAgentConfigError('serverInfo must be { name: string, version: string }.');
    }
    this.serverInfo = { name: serverInfo.name, version: serverInfo.version };
    for (const key of ['title', 'description', 'websiteUrl'] as const) {
      if (typeof serverInfo[key] === 'string') this.serverInfo[key] = serverInfo[key];
    }
    if (Array.isArray(serverInfo.icons)) this.serverInfo.icons = serverInfo.icons;
    // Any registry change can alter a cached list (same names, new schema): start over.
    tools.changes$.subscribe(() => this.toolListCache.clear());
    this.maxResponseBytes = maxResponseBytes;
    this.wrapUntrustedData = options.wrapUntrustedData !== false;
    this.handlers = new Map<string, McpMethodHandler>([
      ['initialize', (params, call) => this.initialize(params, call)],
      ['ping', () => ({})],
      ['tools/list', (params, call) => this.listTools(params, call)],
      ['tools/call', (params, call) => this.callTool(params, call)],
      ['prompts/list', () => ({ prompts: this.prompts.list() })],
      ['prompts/get', (params, call) => this.getPrompt(params, call)],
      ['resources/list', (_params, call) => listResources(call.agent, call.signal)],
      ['resources/templates/list', () => listResourceTemplates()],
      [
        'resources/subscribe',
        (params, call) => subscribeResource(this.resourceSubscriptions, params, call),
      ],
      [
        'resources/unsubscribe',
        (params, call) => unsubscribeResource(this.resourceSubscriptions, params, call),
      ],
      [
        'resources/read',
        (params, call) =>
          readResource(params.uri, call.agent, {
            signal: call.signal,
            maxBytes: this.maxResponseBytes,
          }),
      ],
    ]);
  }

  /** Serves resources/subscribe with this service (set once, by the host that owns it). */
  useResourceSubscriptions(service: ResourceSubscriptionService): void {
    this.resourceSubscriptions = service;
  }

  /** The resource subscription service, when one is configured (transports attach streams). */
  get subscriptions(): ResourceSubscriptionService | undefined {
    return this.resourceSubscriptions;
  }

  dispatch(
    body: unknown,
    agent: ParseAgent,
    context: DispatchContext = {},
  ): Observable<DispatchMessage> {
    return new Observable<DispatchMessage>((subscriber) => {
      // Created lazily: most methods never look at the signal. A caller that aborts its own
      // signal on unsubscribe lends it as it is.
      let teardown: LinkedAbort | undefined;
      let settled = false;
      const owned = context.ownsSignal ? context.signal : undefined;
      const call: McpCallContext = {
        agent,
        elicitation: context.elicitation,
        session: context.session,
        get signal() {
          if (owned) return owned;
          teardown ??= linkedAbort([context.signal]);
          return teardown.signal;
        },
        notify: (message) => {
          if (!settled && !subscriber.closed) subscriber.next({ kind: 'notification', message });
        },
      };
      const deliver = (terminal: DispatchTerminal) => {
        settled = true;
        teardown?.dispose();
        subscriber.next(terminal);
        subscriber.complete();
      };
      this.respond(body, call, context.logger).then(deliver, (error: unknown) =>
        deliver(this.errorFor(null, '(unknown)', error, context.logger)),
      );
      return () => {
        if (!settled) teardown?.abort('client_disconnect');
      };
    });
  }

  /** Validates the envelope, routes it, and maps every failure to its answer. Never rejects. */
  protected async respond(
    body: unknown,
    call: McpCallContext,
    logger?: DispatchLogger,
  ): Promise<DispatchTerminal> {
    let id: JsonRpcId = null;
    let method = '(none)';
    try {
      if (!isPlainObject(body)) return errorResponse(null, CODES.parseError, 'Invalid Request');
      id = toJsonRpcId(body.id);
      if (body.jsonrpc !== '2.0') {
        return errorResponse(id, CODES.invalidRequest, 'Invalid Request: jsonrpc must be "2.0"');
      }
      // `id: null` is tolerated on notifications/* only (they do nothing and get no reply).
      if ('id' in body && id === null && !isNotificationMethod(body.method, body.id)) {
        return errorResponse(
          null,
          CODES.invalidRequest,
          'Invalid Request: id must be a string or a number',
        );
      }
      if (!('method' in body)) {
        // A client's answer to a server request carries no method; there is nothing to reply.
        if ('id' in body && ('result' in body || 'error' in body)) return ACCEPTED;
        return errorResponse(id, CODES.parseError, 'Invalid Request');
      }
      method = typeof body.method === 'string' ? body.method : String(body.method);
      if (typeof body.method === 'string' && body.method.startsWith('notifications/')) {
        if (body.id !== undefined && body.id !== null) {
          return errorResponse(
            id,
            CODES.invalidRequest,
            'Invalid Request: notifications must not carry an id',
          );
        }
        // initialized, cancelled (the transport acts on it) and any other notification: no reply.
        return ACCEPTED;
      }
      // A request method sent without an id is a notification: JSON-RPC forbids a reply, and
      // running a tool nobody can hear back from would only spend quota and hide failures.
      if (!('id' in body)) return ACCEPTED;
      const handler = typeof body.method === 'string' ? this.handlers.get(body.method) : undefined;
      if (!handler) return errorResponse(id, CODES.methodNotFound, `Method not found: ${method}`);
      const params = isPlainObject(body.params) ? body.params : {};
      const result = await handler(params, call);
      return {
        kind: 'response',
        status: 200,
        message: { jsonrpc: '2.0', id, result: result ?? {} },
      };
    } catch (error) {
      return this.errorFor(id, method, error, logger);
    }
  }

  protected initialize(
    params: Record<string, unknown>,
    call?: McpCallContext,
  ): Record<string, unknown> {
    const capabilities = serverCapabilities();
    // Advertised only while LiveQuery answers: a client must not count on updates that never come.
    capabilities.resources.subscribe = this.resourceSubscriptions?.available === true;
    return {
      protocolVersion: negotiateProtocolVersion(params.protocolVersion),
      capabilities,
      serverInfo: { ...this.serverInfo },
      ...(call ? { instructions: serverInstructions(call.agent) } : {}),
    };
  }

  /** The agent's allowed tools; the non-standard `category` param narrows them (never widens). */
  protected listTools(params: Record<string, unknown>, { agent }: McpCallContext): unknown {
    const category = typeof params.category === 'string' ? params.category : undefined;
    const definitions = agent.toolDefinitions({ category });
    // Most agents share a handful of tool sets: build (and serialize) each list once.
    const key = definitions.map((t) => t.name).join(',');
    const cached = this.toolListCache.get(key);
    if (cached) return cached;
    const tools = definitions.map((tool) => {
      const descriptor: Record<string, unknown> = {
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
      };
      const title = tool.title ?? tool.annotations?.title;
      if (title) descriptor.title = title;
      if (tool.icons?.length) descriptor.icons = tool.icons;
      if (tool.outputSchema) descriptor.outputSchema = tool.outputSchema;
      if (tool.annotations) descriptor.annotations = tool.annotations;
      descriptor._meta = { category: tool.category };
      return descriptor;
    });
    const result = withPreserializedJson({ tools });
    if (this.toolListCache.size > 256) this.toolListCache.clear();
    this.toolListCache.set(key, result);
    return result;
  }

  protected async callTool(params: Record<string, unknown>, call: McpCallContext) {
    const { agent, signal } = call;
    const name = params.name;
    if (!name) throw new AgentValidationError('Missing tool name');
    if (typeof name !== 'string') {
      throw new AgentValidationError('Invalid params: tool name must be a string');
    }
    const definition = this.tools.get(name);
    // A protocol error (-32602), as MCP asks for unknown tools, with the same close names among
    // the tools this agent may call that execute() suggests.
    if (!definition) {
      throw new AgentValidationError(unknownToolError(name, agent.allowedTools()).message);
    }
    const args = params.arguments ?? {};
    if (!isPlainObject(args)) {
      throw new AgentValidationError('Invalid params: arguments must be an object');
    }

    const token = progressToken(params);
    const onProgress =
      token === undefined
        ? undefined
        : (update: ProgressUpdate) => call.notify(progressNotification(token, update));
    const envelope = await agent.executeTool(definition, args, {
      signal,
      onProgress,
      elicitation: call.elicitation,
    });
    assertAuthorized(envelope);
    assertLimiterAvailable(envelope);
    const cancelled = agent.cancelled || signal.aborted;
    return toCallToolResult(envelope, {
      toolName: name,
      outputSchema: definition.outputSchema,
      oversize: definition.oversize,
      inputSchema: definition.inputSchema,
      args,
      cancelled,
      cancelledText: cancelled ? cancellationText(signal, agent) : undefined,
      maxBytes: this.maxResponseBytes,
      wrapUntrustedData: this.wrapUntrustedData,
    });
  }

  protected async getPrompt(params: Record<string, unknown>, { agent }: McpCallContext) {
    const name = params.name;
    if (!name) throw new AgentValidationError('Missing prompt name');
    const rendered = await this.prompts.render(String(name), params.arguments, agent);
    const text = rendered.messages[0]?.content.text ?? '';
    if (Buffer.byteLength(text, 'utf8') > this.maxResponseBytes) {
      throw new AgentValidationError(
        `Prompt output exceeded ${this.maxResponseBytes} bytes. Renderers should produce concise prompts; large data goes through tools, not prompts.`,
      );
    }
    return rendered;
  }

  /** The one place errors become JSON-RPC answers. */
  protected errorFor(
    id: JsonRpcId,
    method: string,
    error: unknown,
    logger?: DispatchLogger,
  ): DispatchTerminal {
    if (error instanceof AgentUnauthorizedError) {
      return errorResponse(id, CODES.unauthorized, 'Unauthorized', 401);
    }
    if (error instanceof McpMethodError) return errorResponse(id, error.code, error.message);
    if (error instanceof RateLimiterUnavailableError) {
      // The limiter cannot count (its store is down): not "too many requests", so 503, not 429.
      return {
        kind: 'response',
        status: 503,
        message: { jsonrpc: '2.0', id, error: { code: CODES.serverBusy, message: error.message } },
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(error.retryAfter))) },
      };
    }
    if (error instanceof AgentValidationError) {
      return errorResponse(id, CODES.invalidParams, error.message);
    }
    if (
      error instanceof SecurityBlockedError ||
      error instanceof AccessDeniedError ||
      error instanceof InvalidQueryError
    ) {
      // The refusal's reason stays server-side, like any other security decision.
      return errorResponse(id, CODES.invalidParams, 'Invalid params');
    }
    const name = error instanceof Error ? error.name : typeof error;
    const message = error instanceof Error ? error.message : String(error);
    const line = `MCP ${method} failed: ${name}: ${message}`;
    try {
      if (logger) logger.error(line, error);
      else process.stderr.write(`[parse-agent] ${line}\n`);
    } catch {
      // A broken logger must not turn an error answer into a crash.
    }
    return errorResponse(id, CODES.internalError, 'Internal error');
  }
}

function isNotificationMethod(method: unknown, id: unknown): boolean {
  return id === null && typeof method === 'string' && method.startsWith('notifications/');
}

function errorResponse(
  id: JsonRpcId,
  code: number,
  message: string,
  status = 200,
): DispatchTerminal {
  return { kind: 'response', status, message: { jsonrpc: '2.0', id, error: { code, message } } };
}

/** JSON-RPC ids are strings or numbers; anything else (refused as Invalid Request) is null. */
function toJsonRpcId(value: unknown): JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
    ? value
    : null;
}

function progressToken(params: Record<string, unknown>): string | number | undefined {
  const meta = params._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

function progressNotification(token: string | number, update: ProgressUpdate): JsonRpcNotification {
  const params: Record<string, unknown> = { progressToken: token, progress: update.progress };
  if (typeof update.total === 'number') params.total = update.total;
  if (typeof update.message === 'string') params.message = update.message;
  return { jsonrpc: '2.0', method: 'notifications/progress', params };
}

/** "Cancelled by client (<reason>)" from whichever signal fired first. */
function cancellationText(signal: AbortSignal, agent: ParseAgent): string {
  const reason: unknown = signal.aborted ? signal.reason : agent.signal.reason;
  if (reason instanceof AgentCancelledError) return reason.message;
  return new AgentCancelledError(typeof reason === 'string' ? reason : undefined).message;
}
