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
  protected cached?: { at: number; byName: Map<string, ParseSchema> };
  protected inflight?: Promise<Map<string, ParseSchema>>;

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
    if (!this.inflight) {
      const fetching = this.client.schemas().then((list) => {
        // Names that are not identifiers never reach agents (see schema-text.ts).
        const shown = list.map(shownParseSchema).filter((s): s is ParseSchema => s !== undefined);
        const byName = new Map(shown.map((s) => [s.className, s]));
        this.cached = { at: this.now(), byName };
        return byName;
      });
      this.inflight = fetching;
      const drop = () => {
        if (this.inflight === fetching) this.inflight = undefined;
      };
      fetching.then(drop, drop);
    }
    return raceAbort(this.inflight, signal, abortError);
  }

  async get(className: string, signal?: AbortSignal): Promise<ParseSchema | undefined> {
    return (await this.all(signal)).get(className);
  }

  invalidate(): void {
    this.cached = undefined;
  }

  refreshIfOlderThan(minAgeMs: number): boolean {
    if (!this.cached || this.now() - this.cached.at < minAgeMs) return false;
    this.cached = undefined;
    return true;
  }
}

/** Why a caller stopped waiting: an error given as the abort's reason, else a cancellation. */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name !== 'AbortError'
    ? reason
    : new AgentCancelledError(typeof reason === 'string' ? reason : undefined);
}
