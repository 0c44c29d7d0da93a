/** A Parse class schema as Parse Server's /schemas endpoint returns it. */
export interface ParseSchema {
  className: string;
  fields: Record<
    string,
    { type: string; targetClass?: string; required?: boolean; defaultValue?: unknown }
  >;
  classLevelPermissions?: Record<string, unknown>;
  indexes?: Record<string, Record<string, unknown>>;
}

/** Where the policy and tools read schemas from (cached; fetched with the master key). */
export interface SchemaSource {
  get(className: string, signal?: AbortSignal): Promise<ParseSchema | undefined>;
  all(signal?: AbortSignal): Promise<ReadonlyMap<string, ParseSchema>>;
  /** Drops cached schemas so the next read fetches them again. */
  invalidate(): void;
  /**
   * Drops the cached schemas when they are older than `minAgeMs` (a class created after they were
   * fetched); true when it did. Bounds how often misses can make the cache refetch.
   */
  refreshIfOlderThan?(minAgeMs: number): boolean;
}
