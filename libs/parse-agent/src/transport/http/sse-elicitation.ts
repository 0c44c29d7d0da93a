import { randomUUID } from 'node:crypto';
import { Subject, type Observable } from 'rxjs';
import { AgentCancelledError } from '../../core/errors';
import type {
  ElicitationChannel,
  ElicitationRequest,
  ElicitationResult,
} from '../../ports/elicitation-channel';
import { isPlainObject } from '../../core/plain-object';
import { messageFrame, type SseFrame } from './sse-operators';

interface Pending {
  sessionId: string;
  /** The principal whose call asked: an answer from anyone else is not theirs to give. */
  owner?: string;
  resolve(result: ElicitationResult): void;
  reject(error: Error): void;
}

/**
 * Server-to-client requests over Streamable HTTP: `elicitation/create` goes out on the SSE stream
 * of the tool call that asks, and the client POSTs its JSON-RPC response to the endpoint with the
 * same session. Only sessions whose client declared the `elicitation` capability at initialize get
 * a channel (the session store keeps the flag, so with Redis a call on any node may ask). Pending
 * questions live in the process that asked; an answer POSTed to another node is relayed to it
 * (the shared CancellationBus' relayAnswer).
 */
export class SseElicitations {
  protected readonly capable = new Set<string>();
  protected readonly pending = new Map<string, Pending>();

  /** Remembers that the session's client can answer elicitations, until the session ends. */
  remember(sessionId: string, ended$: Observable<void>, initializeParams: unknown): void {
    if (!declaresElicitation(initializeParams)) return;
    this.capable.add(sessionId);
    this.watch(sessionId, ended$);
  }

  /** Whether a call of this session may ask (its client declared elicitation at initialize). */
  supports(session: { id: string; elicitation?: boolean; ended$: Observable<void> }): boolean {
    if (this.capable.has(session.id)) return true;
    if (session.elicitation !== true) return false;
    // Initialized on another node: forget it here too when it ends.
    this.capable.add(session.id);
    this.watch(session.id, session.ended$);
    return true;
  }

  protected watch(sessionId: string, ended$: Observable<void>): void {
    const forget = () => this.forget(sessionId);
    ended$.subscribe({ next: forget, complete: forget });
  }

  /** A channel writing its requests to `frames` (merged into the call's SSE stream). */
  channel(sessionId: string, frames: Subject<SseFrame>, owner?: string): ElicitationChannel {
    return {
      elicit: (request: ElicitationRequest, signal?: AbortSignal) =>
        new Promise<ElicitationResult>((resolve, reject) => {
          if (signal?.aborted) return reject(new AgentCancelledError());
          const id = `elicit-${randomUUID()}`;
          const onAbort = () => {
            this.pending.delete(id);
            reject(new AgentCancelledError());
          };
          signal?.addEventListener('abort', onAbort, { once: true });
          this.pending.set(id, {
            sessionId,
            owner,
            resolve: (result) => {
              signal?.removeEventListener('abort', onAbort);
              resolve(result);
            },
            reject: (error) => {
              signal?.removeEventListener('abort', onAbort);
              reject(error);
            },
          });
          frames.next(
            messageFrame({
              jsonrpc: '2.0',
              id,
              method: 'elicitation/create',
              params: { ...request },
            }),
          );
        }),
    };
  }

  /**
   * Settles the question a client's response answers. Returns false when the id is not a pending
   * question of this session asked for this principal: another session, or another identity on
   * the same session, cannot answer it (the question keeps waiting, and times out refused).
   */
  settle(body: object, sessionId: string | undefined, owner?: string): boolean {
    const answer = body as { id?: unknown; result?: unknown };
    const id = typeof answer.id === 'string' ? answer.id : undefined;
    const entry = id ? this.pending.get(id) : undefined;
    if (!id || !entry || entry.sessionId !== sessionId) return false;
    if (entry.owner !== undefined && entry.owner !== owner) return false;
    this.pending.delete(id);
    const result = answer.result;
    if (isPlainObject(result) && ['accept', 'decline', 'cancel'].includes(String(result.action))) {
      entry.resolve({
        action: result.action as ElicitationResult['action'],
        content: isPlainObject(result.content) ? result.content : undefined,
      });
    } else {
      // An error answer or a malformed one: treat it as not confirmed.
      entry.resolve({ action: 'cancel' });
    }
    return true;
  }

  protected forget(sessionId: string): void {
    this.capable.delete(sessionId);
    for (const [id, entry] of this.pending) {
      if (entry.sessionId !== sessionId) continue;
      this.pending.delete(id);
      entry.reject(new AgentCancelledError('session ended'));
    }
  }
}

/** Whether initialize params declare that the client answers form elicitations. */
export function declaresElicitation(initializeParams: unknown): boolean {
  const capabilities = isPlainObject(initializeParams) ? initializeParams.capabilities : undefined;
  const elicitation = isPlainObject(capabilities) ? capabilities.elicitation : undefined;
  if (!isPlainObject(elicitation)) return false;
  // 2025-11-25 clients name their modes; `{}` (earlier revisions) means form. Our questions are
  // forms, so a client declaring only `url` is never asked.
  const modes = Object.keys(elicitation);
  return !modes.length || isPlainObject(elicitation.form);
}
