/** JSON Schema fragments shared by the built-in tools' argument schemas. */
export const CLASS_NAME_ARG = {
  type: 'string',
  description: 'Parse class name, e.g. "Order" or "_User".',
};

export const WHERE_ARG = {
  type: 'object',
  description:
    'Parse query constraints, e.g. {"status": "paid", "total": {"$gte": 100}}. Pointers accept a bare objectId; dates accept ISO 8601 strings.',
};

export const KEYS_ARG = {
  type: 'array',
  items: { type: 'string' },
  description: 'Fields to return (dotted paths reach into included pointers).',
};

export const INCLUDE_ARG = {
  type: 'array',
  items: { type: 'string' },
  description: 'Pointer fields to expand into the referenced objects.',
};

export const APPLY_CANONICAL_FILTER_ARG = {
  type: 'boolean',
  description:
    "Set false to skip the class's canonical filter (e.g. to see soft-deleted rows) where the operator allows it. Per-agent filters and tenant scope always apply.",
};

export const OBJECT_ID_ARG = { type: 'string', description: 'The objectId.' };

/** An object schema with `class_name` first (required), then the tool's own properties. */
function classObject(
  className: Record<string, unknown>,
  properties: Record<string, unknown>,
  required: string[],
): Record<string, unknown> {
  return {
    type: 'object',
    properties: { class_name: className, ...properties },
    required: ['class_name', ...required],
  };
}

/** A tool's arguments: `class_name` first, then the tool's own; `class_name` is required. */
export function classArguments(
  properties: Record<string, unknown>,
  required: string[] = [],
): Record<string, unknown> {
  return classObject(CLASS_NAME_ARG, properties, required);
}

/** A class tool's result: `class_name` first, then the tool's own fields. */
export function classResult(
  properties: Record<string, unknown>,
  required: string[] = [],
): Record<string, unknown> {
  return classObject({ type: 'string' }, properties, required);
}
