import type { IncomingMessage } from 'node:http';

/** The part of a deferred body read before authentication (at most the pre-auth limit). */
export interface DeferredBody {
  prefix: Buffer[];
  size: number;
  /** Held back from the headers meanwhile, so no body parser of the host reads the body. */
  contentType?: string;
}

/** The client went away before the body was complete. */
export const ABORTED = Symbol('aborted');

/**
 * Reads at most `max` bytes: the body when complete, ABORTED when the connection closed or failed
 * first, and when the body is larger either undefined (`discard`: the rest is drained unread) or
 * what was read so far with the stream paused (`pause`: the caller continues later, or discards).
 */
export function readLimited(
  req: IncomingMessage,
  max: number,
): Promise<Buffer | undefined | typeof ABORTED>;
export function readLimited(
  req: IncomingMessage,
  max: number,
  overflow: 'discard' | 'pause',
): Promise<Buffer | DeferredBody | undefined | typeof ABORTED>;
export function readLimited(
  req: IncomingMessage,
  max: number,
  overflow: 'discard' | 'pause' = 'discard',
): Promise<Buffer | DeferredBody | undefined | typeof ABORTED> {
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (req.destroyed) return Promise.resolve(ABORTED);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (value: Buffer | DeferredBody | undefined | typeof ABORTED) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= max) return;
      if (overflow === 'pause') {
        req.pause();
        finish({ prefix: chunks, size });
      } else {
        chunks.length = 0;
        finish(undefined);
        req.resume(); // discard the rest
      }
    };
    const onEnd = () => finish(Buffer.concat(chunks, size));
    const onError = () => finish(ABORTED);
    const onClose = () => {
      if (!req.complete) finish(ABORTED);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
    // A stream paused by an earlier read (a deferred body) does not resume by itself.
    req.resume();
  });
}
