import type { ObjectSchema, Schema, SchemaProperties } from '../schema-types';

/**
 * JSON Schema fragments shared by the built-in tools' argument schemas. Each is `as const`: the
 * handlers' argument types are read from the schemas' literal types (see schema-types.ts).
 */
export const CLASS_NAME_ARG = {
  type: 'string',
  description: 'Parse class name, e.g. "Order" or "_User".',
} as const;

export const WHERE_ARG = {
  type: 'object',
  description:
    'Parse query constraints, e.g. {"status": "paid", "total": {"$gte": 100}}. Pointers accept a bare objectId; dates accept ISO 8601 strings.',
} as const;

export const KEYS_ARG = {
  type: 'array',
  items: { type: 'string' },
  description: 'Fields to return (dotted paths reach into included pointers).',
} as const;

export const INCLUDE_ARG = {
  type: 'array',
  items: { type: 'string' },
  description: 'Pointer fields to expand into the referenced objects.',
} as const;

export const APPLY_CANONICAL_FILTER_ARG = {
  type: 'boolean',
  description:
    "Set false to skip the class's canonical filter (e.g. to see soft-deleted rows) where the operator allows it. Per-agent filters and tenant scope always apply.",
} as const;

export const OBJECT_ID_ARG = { type: 'string', description: 'The objectId.' } as const;

/** The schema of a class tool's arguments: `class_name` first, then the tool's own properties. */
export type ClassArgumentsSchema<
  P extends SchemaProperties,
  R extends readonly string[] = readonly [],
> = ObjectSchema<{ class_name: typeof CLASS_NAME_ARG } & P, readonly ['class_name', ...R]>;

/** An object schema with `class_name` first (required), then the tool's own properties. */
function classObject<C extends Schema, P extends SchemaProperties, R extends readonly string[]>(
  className: C,
  properties: P,
  required: R,
): ObjectSchema<{ class_name: C } & P, readonly ['class_name', ...R]> {
  return {
    type: 'object',
    properties: { class_name: className, ...properties },
    required: ['class_name', ...required],
  };
}

/**
 * A tool's arguments: `class_name` first, then the tool's own; `class_name` is required, and so
 * are the properties `required` names (only declared ones). The schema keeps its literal types,
 * so the handler's arguments are read from it.
 */
export function classArguments<
  const P extends SchemaProperties,
  const R extends readonly (keyof P & string)[] = readonly [],
>(properties: P, required?: R): ClassArgumentsSchema<P, R> {
  return classObject(CLASS_NAME_ARG, properties, required ?? ([] as const as unknown as R));
}

/** A class tool's result: `class_name` first, then the tool's own fields. */
export function classResult(
  properties: Record<string, unknown>,
  required: string[] = [],
): Record<string, unknown> {
  return classObject({ type: 'string' }, properties as SchemaProperties, required);
}
