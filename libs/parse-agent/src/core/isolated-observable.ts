import { Observable, Subscriber, type Observer, type Operator, type Subscription } from 'rxjs';

/** Where a subscriber's failure is reported (an operator-facing warning line). */
export type SubscriberErrorReporter = (message: string) => void;

/** The default reporter: one line on stderr, as the agent's own warnings without a sink. */
export const reportToStderr: SubscriberErrorReporter = (message) =>
  process.stderr.write(`[parse-agent] ${message}\n`);

type NextHandler<T> = ((value: T) => void) | null | undefined;

/**
 * An Observable the library hands out (`changes$`, `toolCalls$`, `progress$`...) whose subscribers
 * cannot hurt the process: rxjs rethrows a subscriber's error asynchronously, which ends a Node
 * process, and an unhandled error notification does the same. Here a throwing `next`, `error` or
 * `complete` is reported and ignored, and an error nobody handles is reported. Operators piped
 * from it (`changes$.pipe(filter(...))`) keep the isolation: `lift` builds the same kind.
 */
export class IsolatedObservable<T> extends Observable<T> {
  constructor(
    subscribe: ((subscriber: Subscriber<T>) => void | (() => void) | Subscription) | undefined,
    protected readonly label: string,
    protected readonly report: SubscriberErrorReporter,
  ) {
    super(subscribe);
  }

  override lift<R>(operator?: Operator<T, R>): Observable<R> {
    const lifted = new IsolatedObservable<R>(undefined, this.label, this.report);
    // The same two fields rxjs's own lift sets: the chain subscribes to this, through operator.
    lifted.source = this;
    lifted.operator = operator;
    return lifted;
  }

  override subscribe(
    observerOrNext?: Partial<Observer<T>> | NextHandler<T>,
    error?: ((error: unknown) => void) | null,
    complete?: (() => void) | null,
  ): Subscription {
    // An operator's own subscriber (a chain being built) goes straight through: its callbacks are
    // rxjs's, and wrapping it would cut the chain's unsubscription.
    if (observerOrNext instanceof Subscriber) return super.subscribe(observerOrNext);
    const observer: Partial<Observer<T>> =
      typeof observerOrNext === 'function' ||
      observerOrNext === null ||
      observerOrNext === undefined
        ? {
            next: observerOrNext ?? undefined,
            error: error ?? undefined,
            complete: complete ?? undefined,
          }
        : observerOrNext;
    const guarded = <A extends unknown[]>(
      kind: string,
      handler: ((...args: A) => void) | undefined,
    ) =>
      handler &&
      ((...args: A) => {
        try {
          handler.apply(observer, args);
        } catch (thrown) {
          this.report(
            `a subscriber of ${this.label} threw in ${kind} (ignored): ${describe(thrown)}`,
          );
        }
      });
    return super.subscribe({
      next: guarded('next', observer.next),
      error:
        guarded('error', observer.error) ??
        ((failure: unknown) =>
          this.report(
            `${this.label} ended with an error no subscriber handled: ${describe(failure)}`,
          )),
      complete: guarded('complete', observer.complete),
    });
  }
}

/** `source` as an IsolatedObservable (see there), reporting to `report` (stderr by default). */
export function isolateSubscribers<T>(
  source: Observable<T>,
  label: string,
  report: SubscriberErrorReporter = reportToStderr,
): Observable<T> {
  return new IsolatedObservable<T>((subscriber) => source.subscribe(subscriber), label, report);
}

function describe(error: unknown): string {
  return error instanceof Error
    ? (error.stack ?? `${error.name}: ${error.message}`)
    : String(error);
}
