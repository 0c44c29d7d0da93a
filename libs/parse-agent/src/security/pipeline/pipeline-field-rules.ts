/**
 * The storage spellings an agent must write in API form, and the refusal of internal names in a
 * pipeline (the names themselves are the one list in query/internal-fields.ts).
 */
import { AccessDeniedError } from '../../core/errors';
import { isInternalField } from '../../query/internal-fields';

const STORAGE_TIMESTAMPS: Readonly<Record<string, string>> = {
  _created_at: 'createdAt',
  _updated_at: 'updatedAt',
};

/** The API name for a storage-form segment (`_p_author` -> `author`), or undefined if it is not one. */
export function apiNameForStorage(segment: string, isRoot: boolean): string | undefined {
  if (segment.startsWith('_p_') && segment.length > 3) return segment.slice(3);
  if (segment in STORAGE_TIMESTAMPS) return STORAGE_TIMESTAMPS[segment];
  if (isRoot && segment === '_id') return 'objectId';
  return undefined;
}

/** Refuses a dotted path if any segment is internal. `shown` is how the agent wrote it. */
export function assertNotInternal(path: string, shown: string = path): void {
  for (const segment of path.split('.')) {
    if (isInternalField(segment)) {
      throw new AccessDeniedError(
        `'${shown}' refers to '${segment}', an internal Parse field no agent may read, filter, group or ` +
          `project. Remove it from the pipeline.`,
        { kind: 'internal_field', deniedField: segment },
      );
    }
  }
}

/**
 * Refuses storage spellings (`_p_x`, `_created_at`, `_updated_at`, and `_id` at the root when
 * `rootIdIsStorage`). The suggestion keeps the agent's form: `$author` for a reference, `author` for a name.
 */
export function assertNotStorageForm(
  path: string,
  opts: { asReference: boolean; rootIdIsStorage: boolean; allowedFields?: string[] },
): void {
  const segments = path.split('.');
  let changed = false;
  const rewritten = segments.map((segment, i) => {
    if (i === 0 && segment === '_id' && !opts.rootIdIsStorage) return segment;
    const api = apiNameForStorage(segment, i === 0);
    if (api === undefined) return segment;
    changed = true;
    return api;
  });
  if (!changed) return;
  const denied = segments.find((s, i) => rewritten[i] !== s) as string;
  const suggestion = (opts.asReference ? '$' : '') + rewritten.join('.');
  throw new AccessDeniedError(
    `'${opts.asReference ? '$' : ''}${path}' uses '${denied}', the Parse-on-Mongo storage spelling. ` +
      `Pipelines take API field names: write '${suggestion}' instead.`,
    {
      kind: 'storage_form_field_ref',
      deniedField: denied,
      allowedFields: opts.allowedFields,
      suggestedRewrite: suggestion,
    },
  );
}
