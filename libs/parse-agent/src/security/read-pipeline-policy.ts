import type { ParseSchema } from '../core/parse-schema';
import { isInternalField } from '../query/internal-fields';
import { isInternalName } from './pipeline/pipeline-field-rules';
import type { PipelinePolicy, Where } from './pipeline/pipeline-policy';
import type { ReadPolicy } from './read-policy';

export interface PipelinePolicyOptions {
  /** false: leave the class's canonical filter out (where the operator allows it). Default true. */
  applyCanonicalFilter?: boolean;
  /**
   * Per class, the fields Parse's protectedFields hide from this agent's identity (see
   * `DataPath.protectedFields`). They leave the class's allowlist, so the source projection covers
   * only what the agent may see and refusals never list them. Unknown classes keep the allowlist.
   */
  withheld?: ReadonlyMap<string, readonly string[]>;
  /**
   * true: a class without an allowlist is projected to its schema's visible fields wherever it
   * enters the pipeline, as an allowlisted class is. For paths that aggregate documents as stored
   * (`DataPath.aggregatesStoredDocuments`), where a whole document would carry internal columns.
   */
  projectEverySource?: boolean;
}

/**
 * The fields of a class an agent could read at all: its schema's fields without ACL, relations
 * (never stored in the row) and internal columns. Empty for a class without a schema.
 */
function visibleSchemaFields(schema: ParseSchema | undefined): string[] {
  return Object.entries(schema?.fields ?? {})
    .filter(
      ([name, field]) =>
        field.type !== 'ACL' &&
        field.type !== 'Relation' &&
        !isInternalField(name) &&
        !isInternalName(name),
    )
    .map(([name]) => name);
}

/**
 * Adapts one agent's ReadPolicy to what the pipeline validator asks per class: the class gate, the
 * field allowlist, and the row restrictions (tenant scope, per-agent filter, default filter, canonical
 * filter), each as its own `$match` so an audit can tell the layers apart. Schemas are read once up
 * front because the validator asks synchronously.
 */
export async function pipelinePolicyFor(
  access: ReadPolicy,
  options: PipelinePolicyOptions = {},
): Promise<PipelinePolicy> {
  const schemas = new Map<string, ParseSchema>(
    (await access.allSchemas()).map((s) => [s.className, s]),
  );
  return {
    assertClassReadable(className) {
      // Hidden and nonexistent classes get the same answer as in every other tool.
      access.requireReadableClassIn(className, schemas);
      // A class that needs a tenant binding the agent lacks is refused here, before any stage runs.
      access.tenant(className);
    },
    allowedFields(className) {
      const fields =
        access.meta(className)?.fields ??
        (options.projectEverySource ? visibleSchemaFields(schemas.get(className)) : undefined);
      if (!fields) return undefined;
      const withheld = options.withheld?.get(className) ?? [];
      return new Set(fields.filter((f) => !withheld.includes(f)));
    },
    scopeMatches(className) {
      const out: Where[] = [];
      const tenant = access.tenant(className);
      if (tenant) out.push({ [tenant.field]: tenant.value });
      const { perClass, defaultFilter } = access.filterLayers(className);
      if (perClass && Object.keys(perClass).length) out.push(perClass);
      if (defaultFilter && Object.keys(defaultFilter).length) out.push(defaultFilter);
      const canonical = access.meta(className)?.canonicalFilter;
      if (options.applyCanonicalFilter !== false && canonical && Object.keys(canonical).length) {
        out.push(canonical);
      }
      return out;
    },
    pointerTargets(className) {
      const out: Record<string, string> = {};
      for (const [name, field] of Object.entries(schemas.get(className)?.fields ?? {})) {
        if (field.type === 'Pointer' && field.targetClass) out[name] = field.targetClass;
      }
      for (const [field, target] of Object.entries(access.meta(className)?.references ?? {})) {
        out[field] ??= target;
      }
      return out;
    },
  };
}
