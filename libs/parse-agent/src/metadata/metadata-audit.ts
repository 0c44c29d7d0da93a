import { ALWAYS_KEEP_FIELDS } from '../core/constants';
import type { ParseSchema } from '../core/parse-schema';
import { isInternalField } from '../query/internal-fields';
import { resolveDeclaredNames } from './declared-names';
import type { MetadataRegistry } from './metadata-registry';

/**
 * Gaps in the agent-facing metadata, found by comparing the registered models with the schemas
 * on the server. It reports; the operator decides what is fatal. Every key is always present.
 */
export interface MetadataAuditReport {
  classes_audited: number;
  /** true: the audit covered @AgentVisible models only; false: every registered model. */
  visible_classes_declared: boolean;
  missing_class_descriptions: string[];
  missing_field_descriptions: Record<string, string[]>;
  /**
   * @AgentFields entries the server's class does not have (typos, renamed columns), after a
   * property is mapped to its column and a name to its other spelling (snake_case / camelCase).
   */
  unresolvable_allowlist_entries: Record<string, string[]>;
  /** @AgentJoinFields entries outside the class's own @AgentFields allowlist. */
  join_fields_outside_allowlist: Record<string, string[]>;
  /** Classes scoped by @AgentTenantScope whose tenant field the server's class lacks. */
  missing_tenant_fields: Record<string, string>;
  /**
   * Per class (every registered model that is not hidden, system classes too), each name a
   * declaration gives that matches no field of the server's class, with the fields it has. Reads
   * resting on such a name are refused; `ParseAgentModule` logs these as warnings at start-up.
   */
  declared_names_without_field: Record<string, DeclaredNamesReport>;
  /** Per class, declared names read as another column (`{ sold_at: 'soldAt' }`). */
  declared_names_mapped: Record<string, Record<string, string>>;
  /** Server classes no model declares (reachable or hidden per `unregisteredClasses`). */
  classes_without_model: string[];
  /** Agent methods an LLM would see without a description. */
  methods_without_description: Record<string, string[]>;
  canonical_filter_summary: Record<string, unknown>;
}

/** A model's declared names that match no field of its class, and the fields the class has. */
export interface DeclaredNamesReport {
  /** The model's (TypeScript class's) name. */
  model: string;
  /** Each name, the decorator that declared it, and the columns it could mean when several. */
  names: Array<{ name: string; declared_in: string; candidates?: string[] }>;
  /** The fields the class has on the server (ACL and internal fields left out). */
  fields: string[];
}

const SYSTEM_FIELDS = new Set<string>([...ALWAYS_KEEP_FIELDS, 'ACL']);

/**
 * Every registered model that is not hidden, matched with its class on the server: the names it
 * declares that match no field, and those read as another spelling. Classes not on the server are
 * left out (`classes_without_model` and the class gate speak for those).
 */
export function auditDeclaredNames(
  registry: MetadataRegistry,
  schemas: Iterable<ParseSchema>,
): Pick<MetadataAuditReport, 'declared_names_without_field' | 'declared_names_mapped'> {
  const byName = new Map([...schemas].map((s) => [s.className, s]));
  const without: Record<string, DeclaredNamesReport> = {};
  const mapped: Record<string, Record<string, string>> = {};
  for (const meta of registry.all()) {
    const schema = byName.get(meta.className);
    if (!schema || registry.isHidden(meta.className)) continue;
    const resolved = resolveDeclaredNames(meta, Object.keys(schema.fields));
    if (resolved.unresolved.length) {
      without[meta.className] = {
        model: meta.modelName,
        names: resolved.unresolved.map((u) => ({
          name: u.name,
          declared_in: u.declaredIn,
          ...(u.candidates ? { candidates: u.candidates } : {}),
        })),
        fields: Object.keys(schema.fields)
          .filter((f) => f !== 'ACL' && !isInternalField(f))
          .sort(),
      };
    }
    if (Object.keys(resolved.mapped).length) mapped[meta.className] = resolved.mapped;
  }
  return { declared_names_without_field: without, declared_names_mapped: mapped };
}

/** One warning line per class whose model declares names its class does not have. */
export function declaredNameWarnings(
  report: Pick<MetadataAuditReport, 'declared_names_without_field'>,
): string[] {
  return Object.entries(report.declared_names_without_field).map(([className, entry]) => {
    const names = entry.names
      .map(
        (n) =>
          `${n.declared_in} '${n.name}'${n.candidates ? ` (could be ${n.candidates.map((c) => `'${c}'`).join(' or ')})` : ''}`,
      )
      .join(', ');
    return `Model ${entry.model} declares names class '${className}' does not have: ${names}. Its fields: ${entry.fields.join(', ') || '(none)'}. Reads that rest on these names are refused until the model names real fields (a column, or the property mapped to it with @AgentField({ field })).`;
  });
}

export function auditMetadata(
  registry: MetadataRegistry,
  schemas: Iterable<ParseSchema>,
): MetadataAuditReport {
  const byName = new Map([...schemas].map((s) => [s.className, s]));
  const registered = registry.all();
  const visible = registered.filter((m) => m.visible);
  const audited = (visible.length ? visible : registered).filter(
    (m) => !registry.isHidden(m.className) && !m.className.startsWith('_'),
  );
  const report: MetadataAuditReport = {
    classes_audited: audited.length,
    visible_classes_declared: visible.length > 0,
    missing_class_descriptions: [],
    missing_field_descriptions: {},
    unresolvable_allowlist_entries: {},
    join_fields_outside_allowlist: {},
    missing_tenant_fields: {},
    ...auditDeclaredNames(registry, byName.values()),
    classes_without_model: [],
    methods_without_description: {},
    canonical_filter_summary: {},
  };
  for (const meta of audited) {
    const name = meta.className;
    const schema = byName.get(name);
    if (!meta.description) report.missing_class_descriptions.push(name);
    const fields = (meta.fields ?? Object.keys(schema?.fields ?? {})).filter(
      (f) => !SYSTEM_FIELDS.has(f),
    );
    const undocumented = fields.filter((f) => !meta.fieldDocs[f]?.description);
    if (undocumented.length) report.missing_field_descriptions[name] = undocumented;
    const unresolved = schema
      ? resolveDeclaredNames(meta, Object.keys(schema.fields)).unresolved
      : [];
    const unknown = unresolved.filter((u) => u.declaredIn === '@AgentFields').map((u) => u.name);
    if (unknown.length) report.unresolvable_allowlist_entries[name] = unknown;
    if (meta.fields && meta.joinFields) {
      const outside = meta.joinFields.filter((f) => !meta.fields!.includes(f));
      if (outside.length) report.join_fields_outside_allowlist[name] = outside;
    }
    const tenant = unresolved.find((u) => u.declaredIn === '@AgentTenantScope');
    if (tenant) report.missing_tenant_fields[name] = tenant.name;
    const bare = meta.methods.filter((m) => !m.description?.trim()).map((m) => m.name);
    if (bare.length) report.methods_without_description[name] = bare;
    if (meta.canonicalFilter) report.canonical_filter_summary[name] = meta.canonicalFilter;
  }
  const declared = new Set(registered.map((m) => m.className));
  report.classes_without_model = [...byName.keys()]
    .filter((c) => !declared.has(c) && !c.startsWith('_') && !registry.isHidden(c))
    .sort();
  report.missing_class_descriptions.sort();
  return report;
}

/** The report as a short text table for a boot log. */
export function formatMetadataAudit(report: MetadataAuditReport): string {
  const lines = [
    `Agent metadata audit: ${report.classes_audited} classes (${report.visible_classes_declared ? '@AgentVisible models' : 'all registered models'})`,
  ];
  const row = (label: string, entries: Array<[string, string]>) => {
    if (!entries.length) return;
    lines.push(`  ${label}:`);
    for (const [k, v] of entries) lines.push(`    ${k.padEnd(24)} ${v}`);
  };
  const map = (m: Record<string, string[]>) =>
    Object.entries(m).map(([k, v]): [string, string] => [k, v.join(', ')]);
  row(
    'missing class descriptions',
    report.missing_class_descriptions.map((c): [string, string] => [c, '']),
  );
  row('missing field descriptions', map(report.missing_field_descriptions));
  row('allowlist names unknown to the server', map(report.unresolvable_allowlist_entries));
  row('join fields outside the allowlist', map(report.join_fields_outside_allowlist));
  row('tenant field missing on the class', Object.entries(report.missing_tenant_fields));
  row(
    'declared names the class lacks',
    Object.entries(report.declared_names_without_field).map(([c, e]): [string, string] => [
      c,
      e.names.map((n) => `${n.declared_in} ${n.name}`).join(', '),
    ]),
  );
  row(
    'declared names read as another column',
    Object.entries(report.declared_names_mapped).map(([c, m]): [string, string] => [
      c,
      Object.entries(m)
        .map(([from, to]) => `${from} -> ${to}`)
        .join(', '),
    ]),
  );
  row(
    'server classes without a model',
    report.classes_without_model.map((c): [string, string] => [c, '']),
  );
  row('agent methods without a description', map(report.methods_without_description));
  if (lines.length === 1) lines.push('  no gaps found');
  return lines.join('\n');
}
