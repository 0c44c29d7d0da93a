import { AgentCancelledError } from '../core/errors';

/** The cancellation error for an aborted signal, keeping an AgentCancelledError given as reason. */
export function cancelledBy(signal: AbortSignal): AgentCancelledError {
  const reason: unknown = signal.reason;
  if (reason instanceof AgentCancelledError) return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') {
    return new AgentCancelledError(reason.message);
  }
  return new AgentCancelledError(typeof reason === 'string' ? reason : undefined);
}

/**
 * Settles with the promise, or rejects as soon as the signal aborts: a provider or tool that ignores
 * its signal cannot hold the conversation after a cancel.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(cancelledBy(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(cancelledBy(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
