import type { Observable } from 'rxjs';
import type { ParseAgent } from '../../agent/parse-agent';
import type { McpDispatcher } from '../../mcp/mcp-dispatcher';
import type {
  DispatchContext,
  DispatchLogger,
  DispatchMessage,
} from '../../mcp/mcp-dispatcher.types';
import { dispatchModern, type ModernEnvelope } from '../../mcp/modern-revision';
import type { CancellationBus } from '../../ports/cancellation-bus';
import type { CallsInFlight } from './calls-in-flight';

/**
 * An MCP transport: bytes and framing around the shared dispatcher. Policy (who may do what) is
 * the agent's and the dispatcher's; a transport only moves messages, scopes cancellation, charges
 * the methods the agent does not charge itself (`chargeRequest`) and stops cleanly.
 */
export interface McpTransport {
  /** Which transport this is, for logs ('streamable-http', 'stdio'). */
  readonly kind: string;
  /** Calls running now. */
  readonly callsInFlight: number;
  /** Stops taking calls; resolves once every call in flight has answered or was cancelled. */
  close(): Promise<void>;
}

/**
 * What every transport runs calls with: the dispatcher, the bus that `notifications/cancelled`
 * goes through, the calls in flight (for shutdown) and where unexpected errors are logged.
 */
export interface McpTransportContext {
  readonly dispatcher: McpDispatcher;
  readonly cancellations: CancellationBus;
  readonly calls: CallsInFlight;
  readonly dispatchLogger: DispatchLogger;
}

/** The dispatch of one message: 2026-07-28 requests are unwrapped and their results stamped. */
export function dispatchCall(
  context: McpTransportContext,
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
