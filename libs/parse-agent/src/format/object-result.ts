import { simplifyRow } from './simplify-object';
import { truncatedIncludePayload } from './truncated-include-fields';

/** The `data` of `get_object`: identity and timestamps up front, then the simplified object. */
export function formatObjectResult(
  className: string,
  object: Record<string, unknown>,
  truncatedIncludeFields?: Record<string, string[]>,
): Record<string, unknown> {
  const data: Record<string, unknown> = {
    class_name: className,
    object_id: object.objectId ?? null,
    created_at: object.createdAt ?? null,
    updated_at: object.updatedAt ?? null,
    object: simplifyRow(object),
  };
  const includeFields = truncatedIncludePayload(truncatedIncludeFields);
  if (includeFields) data.truncated_include_fields = includeFields;
  return data;
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
  truncatedIncludeFields?: Record<string, string[]>,
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
  const includeFields = truncatedIncludePayload(truncatedIncludeFields);
  if (includeFields) data.truncated_include_fields = includeFields;
  return data;
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
