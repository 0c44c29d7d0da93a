import { ALWAYS_KEEP_FIELDS } from '../core/constants';
import type { ParseSchema } from '../core/parse-schema';
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
  /** @AgentFields entries the server's class does not have (typos, renamed columns). */
  unresolvable_allowlist_entries: Record<string, string[]>;
  /** @AgentJoinFields entries outside the class's own @AgentFields allowlist. */
  join_fields_outside_allowlist: Record<string, string[]>;
  /** Classes scoped by @AgentTenantScope whose tenant field the server's class lacks. */
  missing_tenant_fields: Record<string, string>;
  /** Server classes no model declares (reachable or hidden per `unregisteredClasses`). */
  classes_without_model: string[];
  /** Agent methods an LLM would see without a description. */
  methods_without_description: Record<string, string[]>;
  canonical_filter_summary: Record<string, unknown>;
}

const SYSTEM_FIELDS = new Set<string>([...ALWAYS_KEEP_FIELDS, 'ACL']);

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
    if (schema && meta.fields) {
      const unknown = meta.fields.filter((f) => !SYSTEM_FIELDS.has(f) && !(f in schema.fields));
      if (unknown.length) report.unresolvable_allowlist_entries[name] = unknown;
    }
    if (meta.fields && meta.joinFields) {
      const outside = meta.joinFields.filter((f) => !meta.fields!.includes(f));
      if (outside.length) report.join_fields_outside_allowlist[name] = outside;
    }
    if (schema && meta.tenantScope && !(meta.tenantScope.field in schema.fields)) {
      report.missing_tenant_fields[name] = meta.tenantScope.field;
    }
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
    'server classes without a model',
    report.classes_without_model.map((c): [string, string] => [c, '']),
  );
  row('agent methods without a description', map(report.methods_without_description));
  if (lines.length === 1) lines.push('  no gaps found');
  return lines.join('\n');
}
