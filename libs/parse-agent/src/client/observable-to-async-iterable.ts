import type { Observable } from 'rxjs';

/**
 * Reads an Observable with `for await`. Values queue until read; leaving the loop early
 * unsubscribes, which lets the source cancel its work.
 */
export function observableToAsyncIterable<T>(source: Observable<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const queue: T[] = [];
      let done = false;
      let failure: { error: unknown } | undefined;
      let wake: (() => void) | undefined;
      const notify = () => {
        wake?.();
        wake = undefined;
      };
      const subscription = source.subscribe({
        next: (value) => {
          queue.push(value);
          notify();
        },
        error: (error: unknown) => {
          failure = { error };
          notify();
        },
        complete: () => {
          done = true;
          notify();
        },
      });
      return {
        async next(): Promise<IteratorResult<T>> {
          for (;;) {
            if (queue.length) return { value: queue.shift() as T, done: false };
            if (failure) throw failure.error;
            if (done) return { value: undefined, done: true };
            await new Promise<void>((resolve) => (wake = resolve));
          }
        },
        async return(): Promise<IteratorResult<T>> {
          subscription.unsubscribe();
          done = true;
          queue.length = 0;
          return { value: undefined, done: true };
        },
      };
    },
  };
}
