import type { ParseSchema } from '../core/parse-schema';
import { isInternalField } from '../query/internal-fields';
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
        field.type !== 'ACL' && field.type !== 'Relation' && !isInternalField(name),
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
      const withheld = options.withheld?.get(className) ?? [];
      const unreadable = hiddenPointerFields(access, schemas.get(className), className);
      const fields = access.meta(className)?.fields;
      if (fields) {
        return new Set(fields.filter((f) => !withheld.includes(f) && !unreadable.has(f)));
      }
      if (!unreadable.size && !options.projectEverySource) return undefined;
      // No allowlist, but a pointer into a hidden class (or documents as stored): every other
      // visible column stays readable, and only those.
      const columns = visibleSchemaFields(schemas.get(className));
      return new Set(columns.filter((f) => !withheld.includes(f) && !unreadable.has(f)));
    },
    scopeMatches(className) {
      const out: Where[] = [];
      const tenant = access.tenant(className);
      if (tenant) out.push({ [tenant.field]: tenant.value });
      const { perClass, defaultFilter } = access.filterLayers(className);
      if (perClass && Object.keys(perClass).length) out.push(perClass);
      if (defaultFilter && Object.keys(defaultFilter).length) out.push(defaultFilter);
      const canonical =
        options.applyCanonicalFilter !== false ? access.canonicalFilter(className) : undefined;
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

/**
 * Pointer columns whose target class the agent may not see. A pipeline cannot read them at all:
 * its output has no lineage to tell a pointer's id or "Class$id" from a computed string, so the
 * column is kept out of the documents (and a reference to it is refused as an unreadable field)
 * instead of guessing at strings afterwards. group_by and distinct refuse such a field too.
 */
function hiddenPointerFields(
  access: ReadPolicy,
  schema: ParseSchema | undefined,
  className: string,
): ReadonlySet<string> {
  const out = new Set<string>();
  for (const [name, field] of Object.entries(schema?.fields ?? {})) {
    if (field.type === 'Pointer' && field.targetClass && access.isDenied(field.targetClass)) {
      out.add(name);
    }
  }
  for (const [field, target] of Object.entries(access.meta(className)?.references ?? {})) {
    if (access.isDenied(target)) out.add(field);
  }
  return out;
}
