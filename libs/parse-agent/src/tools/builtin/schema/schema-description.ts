import type { ReadPolicy } from '../../../security/read-policy';
import { AgentValidationError } from '../../../core/errors';
import type { ParseSchema } from '../../../core/parse-schema';
import { isInternalField } from '../../../query/internal-fields';

const TYPE_NAMES: Record<string, string> = {
  String: 'string',
  Number: 'number',
  Boolean: 'boolean',
  Date: 'date/time',
  Object: 'object (JSON)',
  Array: 'array',
  GeoPoint: 'geo location',
  File: 'file',
  Pointer: 'pointer (reference)',
  Relation: 'relation (many-to-many)',
  Bytes: 'binary data',
  Polygon: 'polygon (geo shape)',
  ACL: 'access control list',
};

const BUILTIN_TYPES: Record<string, string> = {
  _User: 'built-in: User accounts',
  _Role: 'built-in: Access roles',
  _Session: 'built-in: User sessions',
  _Installation: 'built-in: Device installations',
  _Product: 'built-in: In-app purchases',
  _Audience: 'built-in: Push audiences',
};

/** How to filter on a pointer column, spelled out for the model (bare ids work, see normalizeWhere). */
export function pointerQueryHint(field: string, target: string): string {
  const f = JSON.stringify(field);
  const t = JSON.stringify(target);
  return `Pointer to ${target}. Equality: { ${f}: "<objectId>" } or { ${f}: { "__type": "Pointer", "className": ${t}, "objectId": "<objectId>" } }. Several: { ${f}: { "$in": ["<id1>", "<id2>"] } } with bare objectIds.`;
}

function permissionSummary(clp: Record<string, unknown> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const op of ['find', 'get', 'count', 'create', 'update', 'delete', 'addField']) {
    const v = clp?.[op];
    if (v === undefined) continue;
    if (v === true) out[op] = ['public'];
    else if (v === false) out[op] = ['none'];
    else if (v && typeof v === 'object') {
      out[op] = Object.keys(v).map((k) => {
        if (k === '*') return 'public';
        if (k === 'requiresAuthentication') return 'authenticated';
        if (k.startsWith('role:')) return k;
        if (k === 'pointerFields') return 'pointer fields';
        return `user:${k}`;
      });
    }
  }
  return out;
}

function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0];
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j];
      dp[j] = Math.min(
        dp[j] + 1,
        dp[j - 1] + 1,
        prev + (a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return dp[b.length];
}

/** "Did you mean" candidates among the classes the agent can see (hidden ones never suggested). */
export function suggestClasses(name: string, visible: string[]): string[] {
  const max = Math.max(3, Math.ceil(name.length / 2));
  return visible
    .map((c) => ({ c, d: editDistance(name, c) }))
    .filter((x) => x.d <= max)
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.c);
}

/** get_schema's data for one class, as this agent may see it. */
export async function describeSchema(
  access: ReadPolicy,
  className: string,
): Promise<Record<string, unknown>> {
  const schemas = await access.allSchemas();
  const schema: ParseSchema | undefined = schemas.find((s) => s.className === className);
  if (!schema) {
    const suggestions = suggestClasses(
      className,
      schemas.map((s) => s.className).filter((c) => !access.isDenied(c)),
    );
    throw new AgentValidationError(
      `Could not fetch schema for '${className}'.${suggestions.length ? ` Did you mean: ${suggestions.join(', ')}?` : ''}`,
    );
  }
  const meta = access.meta(className);
  const allow = meta?.fields;
  const large = new Set(meta?.largeFields ?? []);
  const fields: Array<Record<string, unknown>> = [];
  for (const [name, f] of Object.entries(schema.fields)) {
    if (isInternalField(name)) continue;
    if (allow && !allow.includes(name)) continue;
    const doc = meta?.fieldDocs[name];
    const entry: Record<string, unknown> = {
      name,
      type: TYPE_NAMES[f.type] ?? f.type.toLowerCase(),
      required: f.required === true,
    };
    if (doc?.description) entry.description = doc.description;
    if (doc?.allowedValues?.length) entry.allowed_values = doc.allowedValues;
    // A pointer or relation holds a small reference, whatever it points to: never flagged large.
    if (large.has(name) && f.type !== 'Pointer' && f.type !== 'Relation') entry.large_field = true;
    if ((f.type === 'Pointer' || f.type === 'Relation') && f.targetClass) {
      const hidden = access.isDenied(f.targetClass);
      if (!hidden) {
        entry.type = `${String(entry.type)} → ${f.targetClass}`;
        entry.target_class = f.targetClass;
      }
      if (f.type === 'Pointer')
        entry.query_hint = pointerQueryHint(name, hidden ? '<targetClass>' : f.targetClass);
    }
    if (f.defaultValue !== undefined && f.defaultValue !== null && f.defaultValue !== '')
      entry.default = f.defaultValue;
    fields.push(entry);
  }
  const visibleFields = new Set(fields.map((f) => String(f.name)));
  const indexes = Object.entries(schema.indexes ?? {})
    .map(([name, spec]) => ({
      name,
      fields: Object.keys(spec),
      unique: name.includes('unique') || Object.values(spec).includes('unique'),
    }))
    .filter((ix) => ix.fields.every((f) => visibleFields.has(f) || f === '_id'));
  const data: Record<string, unknown> = {
    class_name: className,
    type: BUILTIN_TYPES[className] ?? 'custom',
  };
  if (meta?.description) data.description = meta.description;
  if (meta?.usage) data.usage = meta.usage;
  data.fields = fields;
  data.indexes = indexes;
  data.permissions = permissionSummary(schema.classLevelPermissions);
  if (meta?.canonicalFilter) data.canonical_filter = meta.canonicalFilter;
  const keep = new Set(['objectId', 'createdAt', 'updatedAt']);
  const agentFields = allow?.filter((f) => !keep.has(f));
  if (agentFields?.length) data.agent_fields = agentFields;
  const joinFields = meta?.joinFields?.filter((f) => !keep.has(f));
  if (joinFields?.length) data.agent_join_fields = joinFields;
  const rel = access.metadata.relationsFor(className);
  const visibleEdge = (e: { from: string; to: string }) =>
    !access.isDenied(e.from) && !access.isDenied(e.to);
  const outgoing = rel.outgoing.filter(visibleEdge);
  const incoming = rel.incoming.filter(visibleEdge);
  if (outgoing.length || incoming.length) data.relations = { outgoing, incoming };
  return data;
}
