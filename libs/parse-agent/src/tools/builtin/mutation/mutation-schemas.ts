/** JSON Schema fragments of the write tools' arguments. */
export const VALUES_ARG = {
  type: 'object',
  description:
    'Fields to set, e.g. {"status": "closed"}. Only the class\'s agent fields; the tenant field is set for you; ACL, authData and Parse-managed fields are refused.',
} as const;

export const WRITE_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    class_name: { type: 'string' },
    object_id: { type: 'string' },
    changed_keys: { type: 'array', items: { type: 'string' } },
  },
  required: ['class_name'],
};

/** call_method's `arguments.dry_run`: a JSON boolean, nothing that merely looks like one. */
export const DRY_RUN_ARG = {
  type: 'boolean',
  description: 'true: preview what would happen and change nothing; false or absent: run it.',
} as const;
