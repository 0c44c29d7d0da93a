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
const ARRAY = { type: 'array' };

/**
 * "This type, or null", spelled with one `type` per branch: several MCP clients read `type` as a
 * single string and reject or ignore the array form (`["string", "null"]`).
 */
export function nullable(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, { type: 'null' }] };
}

/**
 * Any JSON value, with every branch typed: an empty schema (`{}`) says the same to a validator but
 * is flagged as untyped by strict clients.
 */
export const ANY_JSON_VALUE: JsonSchema = {
  anyOf: ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })),
};

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
  return { type: 'object', anyOf: [success, TOOL_FAILURE_SCHEMA] };
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
    indexes: ARRAY,
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
