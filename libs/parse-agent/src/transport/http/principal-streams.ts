/**
 * Open GET streams per principal in this process. Opening one over the cap closes the same
 * principal's oldest stream (a client that reconnected after a silent network drop is not locked
 * out by its own dead streams), never another caller's.
 */
export class PrincipalStreams {
  protected readonly open = new Map<string, Array<() => void>>();

  constructor(protected readonly maxPerPrincipal: number) {}

  /**
   * Registers a stream; `close` ends it when the principal goes over the cap. Returns the release
   * to call once the stream has ended, whatever ended it.
   */
  add(principal: string, close: () => void): () => void {
    const streams = this.open.get(principal) ?? [];
    this.open.set(principal, streams);
    streams.push(close);
    while (streams.length > this.maxPerPrincipal) streams.shift()?.();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const at = streams.indexOf(close);
      if (at >= 0) streams.splice(at, 1);
      if (!streams.length && this.open.get(principal) === streams) this.open.delete(principal);
    };
  }

  /** Open streams of one principal. */
  count(principal: string): number {
    return this.open.get(principal)?.length ?? 0;
  }
}
