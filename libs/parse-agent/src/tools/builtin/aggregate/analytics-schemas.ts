import { ANY_JSON_VALUE, nullable, TRUNCATED_OUTPUT, withSchemaDefs } from '../output-schemas';
import {
  GROUP_BY_DEFAULT_LIMIT,
  GROUP_BY_MAX_LIMIT,
  GROUP_OPERATIONS,
  GROUP_SORTS,
} from '../../../security/pipeline/group-by-pipeline';
import type { ArgumentsOf, Schema, SchemaProperties } from '../../schema-types';
import {
  APPLY_CANONICAL_FILTER_ARG,
  classArguments,
  classResult,
  WHERE_ARG,
  type ClassArgumentsSchema,
} from '../tool-schemas';

/**
 * JSON Schema fragments for the aggregation tools' arguments and results. The argument fragments
 * keep their literal types (`as const`, generic helpers): the tools' argument types are read from
 * them.
 */

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
  enum: GROUP_OPERATIONS,
  description: 'count (default), sum, avg, min or max; all but count need value_field.',
} as const;

export const VALUE_FIELD_ARG = {
  type: 'string',
  description: 'The numeric field summed, averaged or compared (operation other than count).',
} as const;

export const GROUP_SORT_ARG = { type: 'string', enum: GROUP_SORTS } as const;

export const FIELD_ARG = {
  type: 'string',
  description: 'A field name (API name, no "$").',
} as const;

export const DRY_RUN_ARG = {
  type: 'boolean',
  description:
    'true: build and check the pipeline and return it without running it (every access check still applies).',
} as const;

/** The schema `helperArguments` returns. */
type HelperArgumentsSchema<
  F extends Schema,
  P extends SchemaProperties,
  R extends readonly string[] = readonly [],
> = ClassArgumentsSchema<
  { field: F } & P & { dry_run: typeof DRY_RUN_ARG },
  readonly ['field', ...R]
>;

/**
 * A helper tool's arguments: class_name, the field it works on, its own, and dry_run; `field` and
 * what `required` names are required.
 */
export function helperArguments<
  const F extends Schema,
  const P extends SchemaProperties,
  const R extends readonly (keyof P & string)[] = readonly [],
>(field: F, properties: P, required?: R): HelperArgumentsSchema<F, P, R> {
  return classArguments({ field, ...properties, dry_run: DRY_RUN_ARG }, [
    'field',
    ...(required ?? []),
  ]) as HelperArgumentsSchema<F, P, R>;
}

/**
 * What group_by and group_by_date take besides their field: what to compute, over which rows, in
 * which order (`order` describes the default) and how many (`noun` names them).
 */
function groupProperties(order: string, noun: string) {
  return {
    operation: OPERATION_ARG,
    value_field: VALUE_FIELD_ARG,
    where: WHERE_ARG,
    sort: { ...GROUP_SORT_ARG, description: order },
    limit: limitArg(noun, GROUP_BY_DEFAULT_LIMIT, GROUP_BY_MAX_LIMIT),
    apply_canonical_filter: APPLY_CANONICAL_FILTER_ARG,
  };
}

/** `groupProperties` with a tool's own properties after them (`extra`). */
export function groupArguments<const E extends SchemaProperties = Record<never, Schema>>(
  order: string,
  noun: string,
  extra?: E,
): ReturnType<typeof groupProperties> & E {
  return { ...groupProperties(order, noun), ...(extra as E) };
}

/** The arguments group_by and group_by_date share, as their schemas declare them. */
export type GroupArgs = ArgumentsOf<
  HelperArgumentsSchema<typeof FIELD_ARG, ReturnType<typeof groupProperties>>
>;

/** A helper tool's `limit`: how many groups or values, with its default and maximum. */
export function limitArg(noun: string, defaultLimit: number, max: number) {
  return {
    type: 'integer',
    minimum: 1,
    maximum: max,
    description: `${noun} to return (default ${defaultLimit}, max ${max}).`,
  } as const;
}

/** A helper tool's `flatten_arrays`: `description` says what each element of an array becomes. */
export function flattenArraysArg(description: string) {
  return { type: 'boolean', description } as const;
}

/** group_by's and group_by_date's result: the groups and the tool's own fields. */
export function groupResult(properties: Record<string, unknown>): Record<string, unknown> {
  return helperResult({ ...properties, groups: { type: 'array', items: GROUP_ROW_SCHEMA } });
}

/** A helper tool's result (group_by, group_by_date, distinct): the field, its own, truncation, dry runs. */
export function helperResult(properties: Record<string, unknown>): Record<string, unknown> {
  return withSchemaDefs(
    classResult({
      field: { type: 'string' },
      ...properties,
      apply_canonical_filter: { type: 'boolean' },
      truncated: { type: 'boolean' },
      _truncated: TRUNCATED_OUTPUT,
      ...DRY_RUN_PROPERTIES,
    }),
  );
}
