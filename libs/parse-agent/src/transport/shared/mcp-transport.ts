import type { Observable } from 'rxjs';
import type { ParseAgent } from '../../agent/parse-agent';
import type { AgentIdentity } from '../../core/agent-identity';
import type { RateLimitExceededError } from '../../core/errors';
import type { McpDispatcher } from '../../mcp/mcp-dispatcher';
import type {
  DispatchContext,
  DispatchLogger,
  DispatchMessage,
} from '../../mcp/mcp-dispatcher.types';
import { dispatchModern, type ModernEnvelope } from '../../mcp/modern-revision';
import type { CancellationBus } from '../../ports/cancellation-bus';
import type { SessionStore } from '../../ports/session-store';
import type { BoundedJsonResult } from './bounded-json';
import type { CallsInFlight } from './calls-in-flight';
import type { AgentResolution, AgentSource } from './resolve-agent';
import type { TransportLimits } from './transport-limits';
import type { TransportLogger } from './transport-logger';
import type { UserKeys } from './user-key';

/**
 * An MCP transport: bytes and framing around the shared dispatcher. Policy (who may do what) is
 * the agent's and the dispatcher's; a transport only moves messages, scopes cancellation, charges
 * the methods the agent does not charge itself (`chargeRequest`) and stops cleanly. A host starts
 * each transport once with the context every transport shares, and closes it on shutdown (the
 * Nest module does both for Streamable HTTP and for each of `mcp.transports`).
 */
export interface McpTransport {
  /** Which transport this is, for logs ('streamable-http', 'stdio'). */
  readonly kind: string;
  /** Calls running now. */
  readonly callsInFlight: number;
  /** Called once by the host, after its services exist and before it serves anyone. */
  start(context: McpTransportContext): void | Promise<void>;
  /** Stops taking calls; resolves once every call in flight has answered or was cancelled. */
  close(): Promise<void>;
  /** The tool or prompt list changed: tell this transport's clients (a `list_changed` message). */
  notifyListChanged?(kind: 'tools' | 'prompts'): void;
}

/**
 * What a host hands every transport it starts: the dispatcher, and the parts a transport must
 * not build for itself so that a setting means the same on each (agents with the module's
 * defaults, principals, sessions, limits).
 */
export interface McpTransportContext {
  readonly dispatcher: McpDispatcher;
  /** Where `notifications/cancelled` finds a call (on this node, or on another with Redis). */
  readonly cancellations: CancellationBus;
  /** Where MCP sessions live (the host's store: in memory, on Redis, or the application's). */
  readonly sessions: SessionStore;
  /** The largest message and the deepest JSON a client may send. */
  readonly limits: TransportLimits;
  /** Where a transport reports problems. Never a transport's own output stream. */
  readonly logger: TransportLogger;
  /**
   * The agent a caller acts as: a ParseAgent as it is, or options built through the host's agent
   * factory (the module's defaults applied; `validateSession: true` checks the token first). A
   * function is called first, so an `agentFactory(request)` may run here. Never rejects: a refusal
   * says why (unauthorized, the session check unavailable, or another failure).
   */
  agentFor(source: AgentSource): Promise<AgentResolution>;
  /**
   * The caller's principal as an opaque key (never a token): sessions, streams and cancellations
   * are scoped to it, so one caller cannot use another's. `hostKey` is the host's own name for
   * the caller, when it has one.
   */
  principalKey(agent: AgentIdentity, hostKey?: string): string;
  /** The stable key of the user behind an agent (sessions are counted per user). */
  readonly userKeys: UserKeys;
  /** A client message as JSON, refused when it nests deeper than `limits.maxJsonDepth`. */
  parseJson(text: string): BoundedJsonResult;
  /**
   * Charges a request whose method does work without running a tool (`initialize`, listings,
   * prompts) to the agent's rate limit; the agent charges tool calls itself. Undefined for a method
   * not charged here; else resolves to the refusal (answer it as an error) or undefined.
   */
  charge(
    agent: ParseAgent,
    method: unknown,
  ): Promise<RateLimitExceededError | undefined> | undefined;
}

/**
 * What one transport runs its calls on: the dispatcher, the cancellation bus, its own calls in
 * flight (for its shutdown) and where unexpected dispatch errors are logged.
 */
export interface McpCallContext {
  readonly dispatcher: McpDispatcher;
  readonly cancellations: CancellationBus;
  readonly calls: CallsInFlight;
  readonly dispatchLogger: DispatchLogger;
}

/** The dispatch of one message: 2026-07-28 requests are unwrapped and their results stamped. */
export function dispatchCall(
  context: McpCallContext,
  body: Record<string, unknown>,
  agent: ParseAgent,
  call: DispatchContext,
  modern?: ModernEnvelope,
): Observable<DispatchMessage> {
  return modern
    ? dispatchModern(context.dispatcher, body, agent, call)
    : context.dispatcher.dispatch(body, agent, call);
}

/** The class of an error, for log lines that must not carry its message. */
export function errorClassName(error: unknown): string {
  if (error instanceof Error) return error.constructor?.name || error.name || 'Error';
  return typeof error;
}
