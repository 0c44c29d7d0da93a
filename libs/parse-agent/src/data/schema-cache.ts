import type { ParseSchema, SchemaSource } from '../core/parse-schema';
import { AgentCancelledError } from '../core/errors';
import { raceAbort } from '../core/race-abort';
import { shownParseSchema } from '../metadata/schema-text';
import type { ParseRestClient } from './parse-rest/parse-rest-client';

/**
 * Parse schemas, fetched with the master key and kept for a short time: every query needs field
 * types (pointer and date normalization) and schema changes are rare. `invalidate()` drops the copy.
 */
export class SchemaCache implements SchemaSource {
  protected cached?: { at: number; seq: number; byName: Map<string, ParseSchema> };
  protected inflight?: { seq: number; promise: Promise<Map<string, ParseSchema>> };
  /** Fetches started so far; a fetch's number orders it against callers (see `fresh`). */
  protected started = 0;

  constructor(
    protected readonly client: ParseRestClient,
    protected readonly ttlMs = 30_000,
    protected readonly now: () => number = () => Date.now(),
  ) {}

  /**
   * One fetch is shared by concurrent callers, so one caller's abort never fails the others; each
   * caller still stops waiting when its own signal aborts. The client's request timeout bounds the
   * shared fetch, and a failed or timed-out fetch is dropped, so the next caller tries again.
   */
  async all(signal?: AbortSignal): Promise<Map<string, ParseSchema>> {
    if (this.cached && this.now() - this.cached.at < this.ttlMs) return this.cached.byName;
    return raceAbort((this.inflight ?? this.fetch()).promise, signal, abortError);
  }

  /**
   * The schemas from a fetch that started after this call, so a class created before the call is
   * in them (the cached copy may predate it, however young it is). A fetch already under way that
   * started after the call is shared; one that started before is waited out, and then one new
   * fetch serves every caller that waited. The answer also becomes the cached copy.
   */
  async fresh(signal?: AbortSignal): Promise<Map<string, ParseSchema>> {
    return raceAbort(this.fetchedAfter(this.started), signal, abortError);
  }

  async get(className: string, signal?: AbortSignal): Promise<ParseSchema | undefined> {
    return (await this.all(signal)).get(className);
  }

  invalidate(): void {
    this.cached = undefined;
  }

  /** Schemas from a fetch numbered above `seq` (one that started after fetch number `seq`). */
  protected async fetchedAfter(seq: number): Promise<Map<string, ParseSchema>> {
    while (this.inflight && this.inflight.seq <= seq) {
      // Started before the caller asked: its answer may lack the class. Its failure is not ours.
      await this.inflight.promise.catch(() => undefined);
    }
    if (this.cached && this.cached.seq > seq) return this.cached.byName;
    return (this.inflight ?? this.fetch()).promise;
  }

  protected fetch(): { seq: number; promise: Promise<Map<string, ParseSchema>> } {
    const seq = ++this.started;
    const promise = this.client.schemas().then((list) => {
      // Names that are not identifiers never reach agents (see schema-text.ts).
      const shown = list.map(shownParseSchema).filter((s): s is ParseSchema => s !== undefined);
      const byName = new Map(shown.map((s) => [s.className, s]));
      this.cached = { at: this.now(), seq, byName };
      return byName;
    });
    const entry = { seq, promise };
    this.inflight = entry;
    const drop = () => {
      if (this.inflight === entry) this.inflight = undefined;
    };
    promise.then(drop, drop);
    return entry;
  }
}

/** Why a caller stopped waiting: an error given as the abort's reason, else a cancellation. */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== 'AbortError'
    ? reason
    : new AgentCancelledError(typeof reason === 'string' ? reason : undefined);
}
