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
const NULLABLE_STRING = { type: ['string', 'null'] };

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

const PAGINATION = {
  type: 'object',
  properties: { limit: INTEGER, skip: INTEGER, has_more: BOOLEAN },
  required: ['has_more'],
};

const NOTES = {
  truncated_note: STRING,
  elided_fields: { type: 'array', items: STRING },
  elided_note: STRING,
  withheld_fields: { type: 'object', additionalProperties: STRING },
  withheld_note: STRING,
  truncated_include_fields: OBJECT,
  applied_limits: OBJECT,
  _truncated: OBJECT,
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
    categories: ARRAY,
  },
  required: ['tools'],
});

export const CALL_METHOD_OUTPUT: JsonSchema = orFailure({
  type: 'object',
  description: 'result is whatever the method returned (null when it returned nothing).',
  properties: {
    class_name: STRING,
    method: STRING,
    object_id: STRING,
    dry_run: BOOLEAN,
    result: {},
    would_call: OBJECT,
    note: STRING,
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
