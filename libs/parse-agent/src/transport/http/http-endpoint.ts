import type { Server, ServerResponse } from 'node:http';
import { map, type Observable } from 'rxjs';
import type { ParseAgent } from '../../agent/parse-agent';
import type {
  DispatchLogger,
  JsonRpcId,
  JsonRpcNotification,
} from '../../mcp/mcp-dispatcher.types';
import type { ModernEnvelope } from '../../mcp/modern-revision';
import type { EventStore } from '../../ports/event-store';
import type { RateLimiter } from '../../ports/rate-limiter';
import type { McpSession, SessionStore } from '../../ports/session-store';
import { CallsInFlight } from '../shared/calls-in-flight';
import type { McpCallContext, McpTransportContext } from '../shared/mcp-transport';
import { EndpointDrain } from './endpoint-drain';
import type { ResolvedMcpEndpointOptions } from './mcp-endpoint-options';
import type { McpRequest } from './mcp-request';
import type { McpRequestGate } from './mcp-request-gate';
import type { McpAgentFactory } from './request-agent';
import { SseElicitations } from './sse-elicitation';
import { notificationFrames, type SseFrame } from './sse-operators';
import type { TransportLogger } from '../shared/transport-logger';

/**
 * What the HTTP transport is built with: its own settings and parts. Everything every transport
 * shares (dispatcher, agents, sessions, cancellation, user keys, logger) comes with the context it
 * is started on.
 */
export interface McpHttpHandlerDependencies {
  options: ResolvedMcpEndpointOptions;
  agentFactory: McpAgentFactory | undefined;
  gate: McpRequestGate;
  /** Set when the endpoint is resumable: streaming calls keep their events here. */
  events?: EventStore;
  /** Limits initialize per user (absent: `initializeRateLimit: false`). */
  initializeLimiter?: RateLimiter;
  /**
   * The HTTP server the endpoint is mounted on: at the end of the drain its listener is closed
   * here, and its connections end after their answer, before the host force-closes any socket.
   */
  httpServer?: () => Server | undefined;
}

/**
 * What the parts of the HTTP transport share for the endpoint's lifetime: the transport context
 * (dispatcher, cancellation, calls in flight), the endpoint's options and stores, the drain, and
 * the questions asked on SSE calls.
 */
export interface HttpEndpoint extends McpCallContext {
  readonly options: ResolvedMcpEndpointOptions;
  readonly sessions: SessionStore;
  /** Set when the endpoint is resumable: streaming calls keep their events here. */
  readonly events?: EventStore;
  readonly logger: TransportLogger;
  readonly drain: EndpointDrain;
  readonly elicitations: SseElicitations;
  /** Streaming (SSE) calls open now, capped by `maxConcurrentStreams`. */
  /** Streaming calls open now, and abandoned by a client disconnect since the start. */
  readonly streamCalls: { active: number; abandoned: number };
  /** Signals that the tool list changed (fed across nodes by the Redis relay when configured). */
  readonly toolChanges$: Observable<unknown>;
  /** Signals that the prompt list changed. */
  readonly promptChanges$: Observable<unknown>;
  /** Tool and prompt list changes, as SSE notification frames. */
  listChanged(): Observable<SseFrame>;
}

/** One admitted POST request, from its agent and session to how it is answered. */
export interface HttpCall {
  readonly req: McpRequest;
  readonly res: ServerResponse;
  readonly body: Record<string, unknown>;
  readonly agent: ParseAgent;
  /** The principal the call acts for (sessions, streams and cancellation are scoped to it). */
  readonly owner: string;
  readonly requestId: JsonRpcId;
  /** Where `notifications/cancelled` finds the call (principal + correlation id). */
  readonly scope: string | undefined;
  /** The request's session: created by this initialize, or named by Mcp-Session-Id. */
  readonly session: McpSession | undefined;
  /** Response headers set before the answer (the new session's Mcp-Session-Id). */
  readonly headers: Record<string, string>;
  /** Set for 2026-07-28 requests (per-request revision, no session). */
  readonly modern: ModernEnvelope | undefined;
}

const TOOLS_CHANGED: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'notifications/tools/list_changed',
};
const PROMPTS_CHANGED: JsonRpcNotification = {
  jsonrpc: '2.0',
  method: 'notifications/prompts/list_changed',
};

/**
 * The endpoint's shared context, built once when the transport starts: the HTTP settings and parts,
 * the host's transport context, and the list changes the handler is told about.
 */
export function createHttpEndpoint(
  deps: McpHttpHandlerDependencies,
  context: McpTransportContext,
  changes: { tools$: Observable<unknown>; prompts$: Observable<unknown> },
): HttpEndpoint {
  const { logger } = context;
  const dispatchLogger: DispatchLogger = {
    error: (message, error) =>
      logger.error(message, error instanceof Error ? error.stack : undefined),
    warn: (message) => logger.warn(message),
  };
  const calls = new CallsInFlight();
  const listChanged = notificationFrames(
    changes.tools$.pipe(map(() => TOOLS_CHANGED)),
    changes.prompts$.pipe(map(() => PROMPTS_CHANGED)),
  );
  return {
    options: deps.options,
    dispatcher: context.dispatcher,
    cancellations: context.cancellations,
    sessions: context.sessions,
    events: deps.events,
    logger,
    dispatchLogger,
    calls,
    elicitations: new SseElicitations(),
    drain: new EndpointDrain({
      calls,
      sessions: context.sessions,
      logger,
      gracePeriodMs: deps.options.shutdownGracePeriodMs,
      httpServer: deps.httpServer,
    }),
    streamCalls: { active: 0, abandoned: 0 },
    toolChanges$: changes.tools$,
    promptChanges$: changes.prompts$,
    listChanged: () => listChanged,
  };
}
