/** A JSON-RPC request id (`42` and `"42"` are different ids). */
export type RequestId = string | number | null;

/**
 * Delivers `notifications/cancelled` to the call it names. The in-memory default reaches calls of
 * this process; a shared bus (Redis) reaches the node that runs the call.
 */
export interface CancellationBus {
  /** Registers an in-flight call; returns its deregistration (idempotent, owner-checked). */
  register(scope: string, requestId: RequestId, controller: AbortController): () => void;
  /** Aborts the matching call with `reason`; false when nothing matched (here). */
  cancel(scope: string, requestId: RequestId, reason: string): boolean | Promise<boolean>;
  /**
   * Shared buses: passes a client's answer to a server request (an elicitation) of `sessionId` to
   * the other nodes, where the call that asked may be waiting; true when some node received it.
   */
  relayAnswer?(sessionId: string, response: ClientAnswer): Promise<boolean>;
  /** Shared buses: `handler` receives answers relayed by other nodes (see relayAnswer). */
  onAnswer?(handler: (sessionId: string, response: ClientAnswer) => void): () => void;
}

/** A client's JSON-RPC response to a server request, as relayed between nodes. */
export interface ClientAnswer {
  id: string | number;
  result?: unknown;
  error?: unknown;
  /** The principal (opaque digest) that answered: only the one who was asked may answer. */
  owner?: string;
}

/** Injection token for the CancellationBus. */
export const CancellationBus = Symbol('CancellationBus');
