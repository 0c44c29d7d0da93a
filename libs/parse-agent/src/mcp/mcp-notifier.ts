import { AgentValidationError } from '../core/errors';
import { isPlainRecord } from '../core/plain-object';
import type { JsonRpcNotification } from './mcp-dispatcher.types';

/** Whom a notification is for: one session (its Mcp-Session-Id), or every session of a principal. */
export type McpNotifyTarget = string | { sessionId: string } | { principal: string };

/** Carries notifications to listening streams held by other nodes (Redis with the `redis` option). */
export interface McpNotifyRelay {
  /** Sends the notification to the other nodes; resolves to whether one of them delivered it. */
  publish(
    target: { sessionId?: string; principal?: string },
    message: JsonRpcNotification,
  ): Promise<boolean>;
}

interface Listening {
  sessionId: string;
  principals: readonly string[];
  deliver(message: JsonRpcNotification): void;
}

/**
 * Pushes server notifications to MCP clients' listening streams (the GET stream of a session):
 * `notify('<Mcp-Session-Id>', 'notifications/message', {...})`, or to every session of a principal
 * with `{ principal }` (the caller's principal key or the host's user key for it). Only
 * `notifications/*` methods: a request would need an answer nobody waits for. Resolves to whether a
 * stream received it (on this node, or on another through Redis).
 */
export class McpNotifier {
  protected readonly streams = new Set<Listening>();
  protected relay?: McpNotifyRelay;

  /** Reaches streams on other nodes through `relay` (set by the host with Redis). */
  useRelay(relay: McpNotifyRelay): void {
    this.relay = relay;
  }

  /** A listening stream opened: it receives what is sent to its session or principals. */
  register(
    sessionId: string,
    principals: readonly string[],
    deliver: (message: JsonRpcNotification) => void,
  ): () => void {
    const entry: Listening = { sessionId, principals, deliver };
    this.streams.add(entry);
    return () => void this.streams.delete(entry);
  }

  async notify(
    target: McpNotifyTarget,
    method: string,
    params?: Record<string, unknown>,
  ): Promise<boolean> {
    const message = notificationOf(method, params);
    const resolved = targetOf(target);
    const local = this.deliverLocally(resolved, message);
    if (local && resolved.sessionId) return true;
    const remote = this.relay
      ? await this.relay.publish(resolved, message).catch(() => false)
      : false;
    return local || remote;
  }

  /** Delivers on this node (the relay calls it for messages from other nodes). */
  deliverLocally(
    target: { sessionId?: string; principal?: string },
    message: JsonRpcNotification,
  ): boolean {
    let delivered = false;
    for (const stream of this.streams) {
      const match = target.sessionId
        ? stream.sessionId === target.sessionId
        : target.principal !== undefined && stream.principals.includes(target.principal);
      if (!match) continue;
      try {
        stream.deliver(message);
        delivered = true;
      } catch {
        // A stream that cannot take it is as good as gone.
      }
    }
    return delivered;
  }

  /** Listening streams on this node. */
  get listening(): number {
    return this.streams.size;
  }
}

function targetOf(given: McpNotifyTarget): { sessionId?: string; principal?: string } {
  if (typeof given === 'string' && given) return { sessionId: given };
  const target: unknown = given;
  if (isPlainRecord(target)) {
    if (typeof target.sessionId === 'string' && target.sessionId)
      return { sessionId: target.sessionId };
    if (typeof target.principal === 'string' && target.principal)
      return { principal: target.principal };
  }
  throw new AgentValidationError(
    'notify(target, method, params): target must be a session id (string), { sessionId } or { principal }.',
  );
}

function notificationOf(method: unknown, params: unknown): JsonRpcNotification {
  if (typeof method !== 'string' || !/^notifications\/[A-Za-z0-9_/-]+$/.test(method)) {
    throw new AgentValidationError(
      `notify() sends notifications only: method must be notifications/<name> (got ${JSON.stringify(method)}). A request would need an answer that nobody waits for.`,
    );
  }
  if (params !== undefined && !isPlainRecord(params)) {
    throw new AgentValidationError('notify(target, method, params): params must be an object.');
  }
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}
