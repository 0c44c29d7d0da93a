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
   * The schemas from a fetch that started after this call (concurrent callers share one), so a
   * class created before the call is in them however young the cached copy is. A class missing
   * from `all()` is looked up here before it is called unknown. Without it, `all()` is trusted.
   */
  fresh?(signal?: AbortSignal): Promise<ReadonlyMap<string, ParseSchema>>;
}
