/**
 * One AbortSignal that aborts when any of the given signals does (with that signal's reason), or
 * when `abort()` is called. A cheap stand-in for `AbortSignal.any` on hot paths: `any` keeps weak
 * references and a finalization registry per combined signal, which costs a tool call more than the
 * rest of its bookkeeping; here the listeners are plain and `dispose()` removes them, so a
 * long-lived source signal (an agent's, a request's) does not keep finished calls alive.
 *
 * Call `dispose()` once the work the signal guards has settled. Disposing does not abort.
 */
export interface LinkedAbort {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
  dispose(): void;
}

export function linkedAbort(sources: ReadonlyArray<AbortSignal | undefined>): LinkedAbort {
  const controller = new AbortController();
  const linked: AbortSignal[] = [];
  const onAbort = (event: Event) => {
    controller.abort((event.target as AbortSignal).reason);
    dispose();
  };
  function dispose() {
    for (const source of linked) source.removeEventListener('abort', onAbort);
    linked.length = 0;
  }
  for (const source of sources) {
    if (!source) continue;
    if (source.aborted) {
      controller.abort(source.reason);
      dispose();
      break;
    }
    source.addEventListener('abort', onAbort);
    linked.push(source);
  }
  return {
    signal: controller.signal,
    abort: (reason?: unknown) => {
      controller.abort(reason);
      dispose();
    },
    dispose,
  };
}
