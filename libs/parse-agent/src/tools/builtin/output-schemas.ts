import type { JsonSchema } from '../tool-definition';

/**
 * Output schemas of the built-in tools whose definitions do not carry their own. Clients validate
 * `structuredContent` against them, so they name the keys a model and a program can rely on and
 * stay open (no `additionalProperties: false`) to notes that appear only when they apply.
 */
const STRING = { type: 'string' };
const INTEGER = { type: 'integer' };
const BOOLEAN = { type: 'boolean' };
const OBJECT = { type: 'object' };

/**
 * "This type, or null", spelled with one `type` per branch: several MCP clients read `type` as a
 * single string and reject or ignore the array form (`["string", "null"]`).
 */
export function nullable(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, { type: 'null' }] };
}

const JSON_VALUE_DEF = 'json_value';
const JSON_VALUE_REF = `#/$defs/${JSON_VALUE_DEF}`;

/**
 * Any JSON value, with every branch typed and arrays naming their items: an empty schema (`{}`)
 * says the same to a validator but strict clients refuse it as untyped, and an array without
 * `items` is refused by OpenAI's strict mode. Arrays nest to any depth, so the value refers to
 * itself: a `$ref` to the `$defs` that `withSchemaDefs` puts at the root of the tool's schema.
 */
export const ANY_JSON_VALUE: JsonSchema = { $ref: JSON_VALUE_REF };

const JSON_VALUE_SCHEMA: JsonSchema = {
  anyOf: [
    ...['string', 'number', 'boolean', 'object', 'null'].map((type) => ({ type })),
    { type: 'array', items: { $ref: JSON_VALUE_REF } },
  ],
};

/** Whether `#/$defs/<name>` is referred to anywhere in the schema (its $defs aside). */
function refersTo(schema: unknown, ref: string): boolean {
  if (Array.isArray(schema)) return schema.some((item) => refersTo(item, ref));
  if (typeof schema !== 'object' || schema === null) return false;
  return Object.entries(schema).some(([key, value]) =>
    key === '$defs' ? false : key === '$ref' ? value === ref : refersTo(value, ref),
  );
}

/**
 * A tool's output schema at its root: the `$defs` that `ANY_JSON_VALUE` refers to, when it is
 * used. References resolve against the root, so definitions live there and nowhere below.
 */
export function withSchemaDefs(schema: JsonSchema): JsonSchema {
  if (!refersTo(schema, JSON_VALUE_REF)) return schema;
  const defs = (schema.$defs as Record<string, unknown> | undefined) ?? {};
  return { ...schema, $defs: { ...defs, [JSON_VALUE_DEF]: JSON_VALUE_SCHEMA } };
}

const NULLABLE_STRING = nullable(STRING);

/**
 * The failure envelope these tools send as structuredContent (as they did before they had output
 * schemas), so a client that validates it against the schema accepts both outcomes.
 */
export const TOOL_FAILURE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    error: STRING,
    error_code: STRING,
    details: OBJECT,
    retry_after: { type: 'number' },
  },
  required: ['error', 'error_code'],
};

function orFailure(success: JsonSchema): JsonSchema {
  // Definitions move to the new root, where the success branch's references resolve.
  const { $defs, ...branch } = success;
  const root: JsonSchema = { type: 'object', anyOf: [branch, TOOL_FAILURE_SCHEMA] };
  return withSchemaDefs($defs ? { ...root, $defs } : root);
}

/**
 * The schema, or it with the failure envelope as an alternative when it has none: every built-in
 * tool then answers a failure the same way (structuredContent with error, error_code, details),
 * reads and writes alike.
 */
export function withFailureAlternative(schema: JsonSchema): JsonSchema {
  const alternatives = schema.anyOf;
  const admits =
    Array.isArray(alternatives) &&
    alternatives.some(
      (alt: unknown) =>
        typeof alt === 'object' &&
        alt !== null &&
        'error_code' in ((alt as { properties?: object }).properties ?? {}),
    );
  return admits ? schema : orFailure(schema);
}

/** Include path -> how many pointed-to objects stayed bare pointers (see withheld_includes_note). */
const WITHHELD_INCLUDES = { type: 'object', additionalProperties: INTEGER };

const PAGINATION = {
  type: 'object',
  properties: { limit: INTEGER, skip: INTEGER, has_more: BOOLEAN },
  required: ['has_more'],
};

/** `_truncated`: the result was cut to fit the response size limit (see response-size-cap.ts). */
export const TRUNCATED_OUTPUT: JsonSchema = {
  type: 'object',
  properties: {
    reason: STRING,
    dropped_fields: { type: 'array', items: STRING },
    kept_count: INTEGER,
    original_count: INTEGER,
    next_skip: INTEGER,
    not_returned: { type: 'array', items: STRING },
    hint: STRING,
  },
};

const NOTES = {
  truncated_note: STRING,
  elided_fields: { type: 'array', items: STRING },
  elided_note: STRING,
  withheld_fields: { type: 'object', additionalProperties: STRING },
  withheld_note: STRING,
  truncated_include_fields: OBJECT,
  withheld_includes: WITHHELD_INCLUDES,
  withheld_includes_note: STRING,
  applied_limits: OBJECT,
  _truncated: TRUNCATED_OUTPUT,
};

export const QUERY_CLASS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  description:
    'json format: results (rows); csv/markdown/table: headers and output. Both: pagination and, when has_more, next_call.',
  properties: {
    class_name: STRING,
    result_count: INTEGER,
    format: STRING,
    headers: { type: 'array', items: STRING },
    row_count: INTEGER,
    pagination: PAGINATION,
    truncated: BOOLEAN,
    next_call: {
      type: 'object',
      properties: { tool: STRING, arguments: OBJECT },
      required: ['tool', 'arguments'],
    },
    results: { type: 'array', items: OBJECT },
    output: STRING,
    ...NOTES,
  },
  required: ['class_name'],
});

export const COUNT_OBJECTS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: { class_name: STRING, count: INTEGER, constraints: OBJECT },
  required: ['class_name', 'count'],
});

export const GET_OBJECT_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: {
    class_name: STRING,
    object_id: NULLABLE_STRING,
    created_at: NULLABLE_STRING,
    updated_at: NULLABLE_STRING,
    object: OBJECT,
    truncated_include_fields: OBJECT,
    withheld_includes: WITHHELD_INCLUDES,
    withheld_includes_note: STRING,
    _truncated: TRUNCATED_OUTPUT,
  },
  required: ['class_name', 'object'],
});

export const GET_OBJECTS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: {
    class_name: STRING,
    objects: { type: 'object', additionalProperties: OBJECT },
    missing: { type: 'array', items: STRING },
    requested: INTEGER,
    found: INTEGER,
    truncated_include_fields: OBJECT,
    withheld_includes: WITHHELD_INCLUDES,
    withheld_includes_note: STRING,
    _truncated: TRUNCATED_OUTPUT,
  },
  required: ['class_name', 'objects', 'missing'],
});

export const GET_SAMPLE_OBJECTS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: {
    class_name: STRING,
    sample_count: INTEGER,
    samples: { type: 'array', items: OBJECT },
    note: STRING,
    applied_limits: OBJECT,
    _truncated: TRUNCATED_OUTPUT,
  },
  required: ['class_name', 'samples'],
});

export const GET_ALL_SCHEMAS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: {
    total: INTEGER,
    note: STRING,
    built_in: { type: 'array', items: OBJECT },
    custom: { type: 'array', items: OBJECT },
  },
  required: ['total', 'built_in', 'custom'],
});

export const GET_SCHEMA_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: {
    class_name: STRING,
    type: STRING,
    description: STRING,
    usage: STRING,
    fields: { type: 'array', items: OBJECT },
    indexes: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: STRING, fields: { type: 'array', items: STRING }, unique: BOOLEAN },
        required: ['name', 'fields'],
      },
    },
    permissions: OBJECT,
  },
  required: ['class_name', 'fields'],
});

export const LIST_TOOLS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: {
    tools: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: STRING, category: STRING, description: STRING },
        required: ['name', 'category'],
      },
    },
    // Each category the agent may meet, with what it is for (the spec's map, not a list).
    categories: { type: 'object', additionalProperties: STRING },
  },
  required: ['tools', 'categories'],
});

export const CALL_METHOD_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  description: 'result is whatever the method returned (null when it returned nothing).',
  properties: {
    class_name: STRING,
    method: STRING,
    object_id: STRING,
    dry_run: BOOLEAN,
    result: ANY_JSON_VALUE,
    would_call: OBJECT,
    note: STRING,
    dry_run_note: STRING,
  },
  required: ['class_name', 'method'],
});

export const CREATE_CLASS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: { class_name: STRING, created: BOOLEAN, fields: { type: 'array', items: STRING } },
  required: ['class_name', 'created'],
});

export const DELETE_CLASS_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  properties: { class_name: STRING, deleted: BOOLEAN },
  required: ['class_name', 'deleted'],
});
