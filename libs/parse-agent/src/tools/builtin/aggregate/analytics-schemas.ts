import { ANY_JSON_VALUE, nullable } from '../output-schemas';

/** JSON Schema fragments for the aggregation tools' arguments and results. */

export const GROUP_ROW_SCHEMA = {
  type: 'object',
  // A group's key is the field's value (a string, number, date, pointer id... or null).
  properties: { key: ANY_JSON_VALUE, value: nullable({ type: 'number' }) },
  required: ['key', 'value'],
};

/** Fields every dry-run envelope carries (the tools' output schemas allow either shape). */
export const DRY_RUN_PROPERTIES = {
  dry_run: { type: 'boolean' },
  parameters: { type: 'object' },
  pipeline: { type: 'array', items: { type: 'object' } },
  hint: { type: 'string' },
};

export const OPERATION_ARG = {
  type: 'string',
  enum: ['count', 'sum', 'avg', 'average', 'min', 'max'],
  description: 'count (default), sum, avg, min or max; all but count need value_field.',
};

export const VALUE_FIELD_ARG = {
  type: 'string',
  description: 'The numeric field summed, averaged or compared (operation other than count).',
};

export const GROUP_SORT_ARG = {
  type: 'string',
  enum: ['value_desc', 'value_asc', 'key_desc', 'key_asc'],
};

export const FIELD_ARG = { type: 'string', description: 'A field name (API name, no "$").' };
