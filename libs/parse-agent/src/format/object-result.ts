import { simplifyRow } from './simplify-object';
import { truncatedIncludePayload } from './truncated-include-fields';
import { withheldIncludesPayload } from './withheld-includes';

/** What a read with include says about its joins. */
export interface IncludeNotes {
  /** Pointer name -> fields left out by auto-projection of that include. */
  truncatedIncludeFields?: Record<string, string[]>;
  /** Include path -> objects left as bare pointers (the agent's read of their class omits them). */
  withheldIncludes?: Record<string, number>;
}

/** The `data` of `get_object`: identity and timestamps up front, then the simplified object. */
export function formatObjectResult(
  className: string,
  object: Record<string, unknown>,
  notes: IncludeNotes = {},
): Record<string, unknown> {
  const data: Record<string, unknown> = {
    class_name: className,
    object_id: object.objectId ?? null,
    created_at: object.createdAt ?? null,
    updated_at: object.updatedAt ?? null,
    object: simplifyRow(object),
  };
  const includeFields = truncatedIncludePayload(notes.truncatedIncludeFields);
  if (includeFields) data.truncated_include_fields = includeFields;
  return { ...data, ...withheldIncludesPayload(notes.withheldIncludes) };
}

/**
 * The `data` of `get_objects`. `missing` lists requested ids that came back empty, in request order;
 * a row the agent may not read is indistinguishable from one that does not exist.
 */
export function formatObjectsResult(
  className: string,
  objectsById: Record<string, Record<string, unknown>>,
  missing: string[],
  requested: number,
  notes: IncludeNotes = {},
): Record<string, unknown> {
  const objects: Record<string, unknown> = {};
  for (const [id, object] of Object.entries(objectsById)) objects[id] = simplifyRow(object);
  const data: Record<string, unknown> = {
    class_name: className,
    objects,
    missing: [...missing],
    requested,
    found: Object.keys(objects).length,
  };
  const includeFields = truncatedIncludePayload(notes.truncatedIncludeFields);
  if (includeFields) data.truncated_include_fields = includeFields;
  return { ...data, ...withheldIncludesPayload(notes.withheldIncludes) };
}

/** The `data` of `get_sample_objects`; the caller fetches newest first. */
export function formatSampleResult(
  className: string,
  rows: Array<Record<string, unknown>>,
): Record<string, unknown> {
  return {
    class_name: className,
    sample_count: rows.length,
    samples: rows.map(simplifyRow),
    note: `These are the ${rows.length} most recently created objects`,
  };
}

/** The `data` of `count_objects`; `constraints` echoes the composed where (or `{}`). */
export function formatCountResult(
  className: string,
  count: number,
  constraints?: Record<string, unknown> | null,
): Record<string, unknown> {
  return { class_name: className, count, constraints: constraints ?? {} };
}
