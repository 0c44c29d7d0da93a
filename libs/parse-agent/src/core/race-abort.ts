import { AgentCancelledError } from './errors';

/** What an aborted signal rejects with when the caller names nothing else: its own reason. */
function reasonOf(signal: AbortSignal): unknown {
  return signal.reason;
}

/**
 * Settles with the promise, or rejects as soon as the signal aborts, whichever comes first: a tool,
 * a provider or a shared fetch that ignores its signal cannot hold its caller after a cancel. The
 * promise itself runs on, and a rejection it makes after losing the race is never left unhandled. `errorFor` turns the aborted signal into the rejection (default: its reason).
 */
export function raceAbort<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  errorFor: (signal: AbortSignal) => unknown = reasonOf,
): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(errorFor(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(errorFor(signal));
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

/** The cancellation error for an aborted signal, keeping an AgentCancelledError given as reason. */
export function cancelledBy(signal: AbortSignal): AgentCancelledError {
  const reason: unknown = signal.reason;
  if (reason instanceof AgentCancelledError) return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') {
    return new AgentCancelledError(reason.message);
  }
  return new AgentCancelledError(typeof reason === 'string' ? reason : undefined);
}
