import type { McpSession } from '../../ports/session-store';
import type { HttpEndpoint } from './http-endpoint';

/**
 * notifications/cancelled: aborts the named call of this caller (its scope), on whichever node
 * runs it. Without a scope there is nothing the caller may cancel.
 */
export async function relayCancel(
  endpoint: HttpEndpoint,
  scope: string | undefined,
  body: Record<string, unknown>,
): Promise<void> {
  const requestId = (body.params as Record<string, unknown> | undefined)?.requestId;
  if (scope && (typeof requestId === 'string' || typeof requestId === 'number')) {
    await Promise.resolve(
      endpoint.cancellations.cancel(scope, requestId, 'notifications_cancelled'),
    ).catch(() => false);
  }
}

/**
 * A client's answer to a server request (elicitation); unknown ids are ignored. One asked on
 * another node is relayed there (the session was checked to be the caller's).
 */
export async function settleAnswer(
  endpoint: HttpEndpoint,
  body: Record<string, unknown>,
  session: McpSession | undefined,
  owner: string,
): Promise<void> {
  if (endpoint.elicitations.settle(body, session?.id, owner) || !session) return;
  const id = body.id;
  if (typeof id === 'string' || typeof id === 'number') {
    await Promise.resolve(
      endpoint.cancellations.relayAnswer?.(session.id, {
        id,
        result: body.result,
        error: body.error,
        owner,
      }),
    ).catch(() => false);
  }
}
