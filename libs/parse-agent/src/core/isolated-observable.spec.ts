import { config, filter, firstValueFrom, map, Subject, take, toArray } from 'rxjs';
import { isolateSubscribers } from './isolated-observable';

/**
 * What rxjs would rethrow asynchronously (ending a Node process) is caught here with its
 * `onUnhandledError` hook: the isolated observable must leave nothing for it. The child-process
 * suite (test/faults/callback-isolation.spec.ts) checks the process itself survives.
 */
describe('isolateSubscribers', () => {
  const unhandled: unknown[] = [];
  const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
  beforeAll(() => {
    config.onUnhandledError = (error) => unhandled.push(error);
  });
  afterAll(() => {
    config.onUnhandledError = null;
  });
  beforeEach(() => {
    unhandled.length = 0;
  });

  it('reports a throwing subscriber and keeps delivering to it and to the others', async () => {
    const subject = new Subject<number>();
    const reports: string[] = [];
    const isolated$ = isolateSubscribers(subject, 'changes$', (m) => reports.push(m));
    const seenByThrower: number[] = [];
    const seenByOther: number[] = [];
    isolated$.subscribe((n) => {
      seenByThrower.push(n);
      throw new Error(`boom ${n}`);
    });
    isolated$.subscribe({ next: (n) => seenByOther.push(n) });
    subject.next(1);
    subject.next(2);
    await settle();
    expect(seenByThrower).toEqual([1, 2]);
    expect(seenByOther).toEqual([1, 2]);
    expect(reports).toEqual([
      expect.stringMatching(/^a subscriber of changes\$ threw in next \(ignored\): Error: boom 1/),
      expect.stringMatching(/boom 2/),
    ]);
    expect(unhandled).toEqual([]);
  });

  it('keeps the isolation through piped operators, and lets operators work as usual', async () => {
    const subject = new Subject<number>();
    const reports: string[] = [];
    const isolated$ = isolateSubscribers(subject, 'toolCalls$', (m) => reports.push(m));
    isolated$
      .pipe(
        filter((n) => n > 1),
        map((n) => n * 10),
      )
      .subscribe(() => {
        throw new Error('piped boom');
      });
    const collected = firstValueFrom(isolated$.pipe(take(3), toArray()));
    for (const n of [1, 2, 3]) subject.next(n);
    await expect(collected).resolves.toEqual([1, 2, 3]);
    await settle();
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(/toolCalls\$ threw in next.*piped boom/);
    expect(unhandled).toEqual([]);
  });

  it('reports an error notification no subscriber handles, and a throwing complete', async () => {
    const subject = new Subject<number>();
    const reports: string[] = [];
    const isolated$ = isolateSubscribers(subject, 'progress$', (m) => reports.push(m));
    isolated$.subscribe(() => undefined);
    isolated$.subscribe({
      complete: () => {
        throw new Error('complete boom');
      },
    });
    subject.error(new Error('source failed'));
    const other = new Subject<number>();
    isolateSubscribers(other, 'ended$', (m) => reports.push(m)).subscribe({
      complete: () => {
        throw new Error('complete boom');
      },
    });
    other.complete();
    await settle();
    expect(reports).toEqual([
      expect.stringMatching(
        /^progress\$ ended with an error no subscriber handled: .*source failed/,
      ),
      expect.stringMatching(/^progress\$ ended with an error no subscriber handled/),
      expect.stringMatching(/^a subscriber of ended\$ threw in complete \(ignored\)/),
    ]);
    expect(unhandled).toEqual([]);
  });

  it('unsubscribes the source when a piped subscription ends', () => {
    const subject = new Subject<number>();
    const isolated$ = isolateSubscribers(subject, 'x$', () => undefined);
    const subscription = isolated$.pipe(map((n) => n + 1)).subscribe(() => undefined);
    expect(subject.observed).toBe(true);
    subscription.unsubscribe();
    expect(subject.observed).toBe(false);
  });

  it('without the isolation the same subscriber is rethrown by rxjs (the check can fail)', async () => {
    const subject = new Subject<number>();
    subject.subscribe(() => {
      throw new Error('raw boom');
    });
    subject.next(1);
    await settle();
    expect(unhandled).toEqual([expect.objectContaining({ message: 'raw boom' })]);
  });
});
