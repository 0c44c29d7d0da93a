import type { ParseSchema, SchemaSource } from '../core/parse-schema';
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

  /** Shared by concurrent callers, so one caller's abort never fails the others. */
  async all(): Promise<Map<string, ParseSchema>> {
    if (this.cached && this.now() - this.cached.at < this.ttlMs) return this.cached.byName;
    this.inflight ??= this.client
      .schemas()
      .then((list) => {
        const byName = new Map(list.map((s) => [s.className, s]));
        this.cached = { at: this.now(), byName };
        return byName;
      })
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  async get(className: string): Promise<ParseSchema | undefined> {
    return (await this.all()).get(className);
  }

  invalidate(): void {
    this.cached = undefined;
  }
}
