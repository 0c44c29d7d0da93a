import type { ParseAgent } from '../agent/parse-agent';
import { AgentValidationError, ParseAgentError } from '../core/errors';
import type { JsonRpcNotification } from '../mcp/mcp-dispatcher.types';
import { McpMethodError } from '../mcp/mcp-method-error';
import { JSON_RPC_ERROR_CODES } from '../mcp/protocol.constants';
import type { LiveQueryConnection, LiveQueryConnector } from './live-query-connector';
import { within } from './live-query-pool';
import type { LivePlan } from './subscription-plan';

/** Wire codes of a refusal by the agent's policy (as opposed to Parse or the network failing). */
const POLICY_REFUSALS = new Set([
  'access_denied',
  'invalid_argument',
  'invalid_query',
  'security_blocked',
  'permission_denied',
  'pointer_shape_mismatch',
  'tool_filtered',
  'unknown_tool',
  // The identity itself is gone (a session token revoked or expired): no retry brings it back.
  'unauthorized',
]);

/**
 * The plan was refused by policy (access denied, a where the agent refuses, a class LiveQuery
 * cannot watch): the subscription cannot run for this agent, whenever tried. Anything else (a
 * timeout, Parse answering 5xx or not at all, a rate limit) may pass on a retry.
 */
export function isPolicyRefusal(error: unknown): boolean {
  return error instanceof ParseAgentError && POLICY_REFUSALS.has(error.errorCode);
}

/** A store that does not answer refuses the call with what to do, and the process keeps serving. */
export async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new McpMethodError(
      JSON_RPC_ERROR_CODES.internalError,
      `Resource subscriptions are unavailable: Redis, where they are kept (the redis option), does not answer (${(error as Error)?.message}). Retry later; read the resource meanwhile.`,
    );
  }
}

export function sessionEnded(): AgentValidationError {
  return new AgentValidationError(
    'The MCP session ended while this subscription was being set up: start a new session (initialize) and subscribe again.',
  );
}

export function sessionGone(): AgentValidationError {
  return new AgentValidationError(
    'This MCP session has ended (expired or deleted): initialize a new session, then subscribe again.',
  );
}

export function sessionFull(cap: number): AgentValidationError {
  return new AgentValidationError(
    `This session already holds ${cap} resource subscriptions, the limit set by liveQuery.maxSubscriptionsPerSession: unsubscribe from resources you no longer watch.`,
  );
}

export function nodeFull(max: number): McpMethodError {
  return new McpMethodError(
    JSON_RPC_ERROR_CODES.serverBusy,
    `The server holds its maximum of ${max} resource subscriptions (liveQuery.maxSubscriptions): retry later, or read the resource instead.`,
  );
}

/** A change recorded in Redis whose announcement Redis did not take (the session id shortened). */
export function notAnnounced(
  change: 'subscribe' | 'unsubscribe',
  uri: string,
  sessionId: string,
  resyncMs: number,
): string {
  return `resources/${change} of ${uri} (session ${sessionId.slice(0, 8)}…) is saved in Redis but could not be announced to the other nodes: the node holding the session's stream applies it within ${Math.ceil(resyncMs / 1000)} s, or when its stream reconnects.`;
}

export function updatedNotification(uri: string): JsonRpcNotification {
  return { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } };
}

/** A plan made for another principal must not run on this agent's socket. */
export function samePrincipal(plan: LivePlan, agent: ParseAgent): boolean {
  if ('sessionToken' in plan.credentials)
    return plan.credentials.sessionToken === agent.sessionToken;
  return agent.authType === 'master_key';
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Opens and closes a master-key LiveQuery connection: undefined if it answered, else why not. */
export async function probeLiveQuery(
  connector: LiveQueryConnector,
  timeoutMs: number,
): Promise<string | undefined> {
  let connection: LiveQueryConnection | undefined;
  try {
    connection = connector.open(
      { masterKey: true },
      { down: () => undefined, restored: () => undefined },
    );
    await within(connection.ready, timeoutMs, 'LiveQuery server');
    return undefined;
  } catch (error) {
    return messageOf(error);
  } finally {
    if (connection)
      await within(connection.close(), 1000, 'LiveQuery close').catch(() => undefined);
  }
}

/** The periodic re-read of shared records runs in this many slices of its interval. */
export const RESYNC_SLICES = 8;

/** A session's slice of the periodic re-read: stable for its id, spread evenly across ids. */
export function resyncSliceOf(sessionId: string): number {
  let hash = 0;
  for (let i = 0; i < sessionId.length; i++) hash = (hash * 31 + sessionId.charCodeAt(i)) >>> 0;
  return hash % RESYNC_SLICES;
}
