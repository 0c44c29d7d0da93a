import { createHash, randomUUID } from 'node:crypto';

/**
 * Stream ids carry a digest of their owner, so a `Last-Event-ID` presented by another principal
 * is refused on any node without a lookup, and without putting the principal's digest on the wire.
 */
export function newStreamId(owner: string): string {
  const nonce = randomUUID();
  return `${nonce}.${ownerTag(owner, nonce)}`;
}

/** Whether `streamId` was issued to `owner` by newStreamId. */
export function streamOwnedBy(streamId: string, owner: string): boolean {
  const dot = streamId.indexOf('.');
  if (dot <= 0) return false;
  return streamId.slice(dot + 1) === ownerTag(owner, streamId.slice(0, dot));
}

function ownerTag(owner: string, nonce: string): string {
  return createHash('sha256').update(`${owner}\u0000${nonce}`).digest('base64url').slice(0, 22);
}
