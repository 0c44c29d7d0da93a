import type { ParseSchema, SchemaSource } from '../core/parse-schema';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import {
  columnFor,
  renameWhereFields,
  resolveDeclaredNames,
  type ResolvedClassNames,
  type UnresolvedName,
} from '../metadata/declared-names';
import type { ClassMetadata } from '../metadata/metadata.types';
import type { FieldType, Where } from '../query/constraint-translator';
import { passesListFilter, type NormalizedListFilter } from './class-filter';
import { isInternalField } from '../query/internal-fields';
import { resolveTenantScope, type ResolvedTenant } from './tenant-scope';
import { composeWhere } from '../query/where-composer';
import type { AgentIdentity } from '../core/agent-identity';
import { ALLOWLIST_PREVIEW_CAP, CLASS_NAME_PATTERN, FIELD_PATH_PATTERN } from '../core/constants';
import {
  AccessDeniedError,
  AgentValidationError,
  ParseAgentConfigError,
  UnknownFieldError,
} from '../core/errors';
import type { QueryCostLimits } from '../core/constants';
import { isPlainObject } from '../core/plain-object';
import { closestNames } from './closest-names';

/** Fields every Parse object has, whether or not a schema lists them. */
const BUILTIN_FIELDS: ReadonlySet<string> = new Set(['objectId', 'createdAt', 'updatedAt']);

/** Declarations that name fields an agent may ask for by name. */
const FIELD_DECLARATIONS: ReadonlySet<string> = new Set([
  '@AgentFields',
  '@AgentJoinFields',
  '@AgentLargeFields',
  '@AgentField',
]);

/**
 * Which classes and fields one agent may see, as declared: the class gate (hidden classes, the
 * agent's classes: filter, missing classes alike), the model's declared names matched with the
 * class's columns, tenant scope, canonical filter and per-agent filters, field allowlists and the
 * refusals for fields the agent may not use. `ReadPolicy` builds on it to plan and redact reads.
 */
export class ClassAccessPolicy {
  protected readonly deniedCache = new Map<string, 'hidden_class' | 'class_filter' | null>();
  protected memoVersion = -1;
  protected readonly allowSets = new Map<
    string,
    { list: readonly string[] | undefined; set: ReadonlySet<string> | undefined }
  >();
  protected readonly declaredMemo = new Map<
    string,
    { meta: ClassMetadata; schema: ParseSchema; resolved: ResolvedClassNames }
  >();
  /** The schemas the last class check saw: lets the synchronous field checks spot unknown names. */
  protected schemaSnapshot?: ReadonlyMap<string, ParseSchema>;

  constructor(
    readonly identity: AgentIdentity,
    readonly metadata: MetadataRegistry,
    protected readonly schemas: SchemaSource,
    protected readonly classFilter: NormalizedListFilter | undefined,
    protected readonly filters: Readonly<Record<string, Where>>,
    protected readonly queryLimits: Partial<QueryCostLimits> = {},
  ) {}

  /**
   * The class's metadata in column names: declared properties and other spellings matched with
   * the columns of the class as the last class check saw them (see `declaredNames`).
   */
  meta(className: string): ClassMetadata | undefined {
    return this.declaredNames(className)?.meta;
  }

  /**
   * The class's declared names matched with its columns, and those that match none. Until a class
   * check has loaded the class's schema, the registry's metadata as compiled.
   */
  protected declaredNames(className: string): ResolvedClassNames | undefined {
    this.syncWithRegistry();
    const meta = this.metadata.get(className);
    if (!meta) return undefined;
    const schema = this.schemaSnapshot?.get(className);
    if (!schema || !Object.keys(schema.fields).length) return { meta, mapped: {}, unresolved: [] };
    const memo = this.declaredMemo.get(className);
    if (memo?.meta === meta && memo.schema === schema) return memo.resolved;
    const resolved = resolveDeclaredNames(meta, Object.keys(schema.fields));
    this.declaredMemo.set(className, { meta, schema, resolved });
    return resolved;
  }

  /**
   * Refuses a read that would rest on a declared name matching no column of the class (a tenant
   * field, a canonical filter, an agent filter): it could only match no row, and an empty answer
   * would read as a true one. The text names the declaration, the name and the class's fields.
   */
  protected misdeclared(className: string, what: string, name: string, fix: string): never {
    const fields = this.fieldsForMessage(className);
    throw new ParseAgentConfigError(
      `Class '${className}' cannot be read as configured: ${what} names '${name}', which is no field of '${className}', so no row could match. Fields of '${className}': ${fields.join(', ') || '(none)'}. ${fix}`,
    );
  }

  /** Fields a message may name for the class: the usable allowlist, else its visible columns. */
  protected fieldsForMessage(className: string): string[] {
    if (this.allowlist(className)) return this.usableFields(className);
    const schema = this.schemaSnapshot?.get(className);
    const hidden = this.identity.usingMasterKey
      ? new Set<string>()
      : protectedAnywhere(className, schema);
    return Object.keys(schema?.fields ?? {}).filter(
      (f) => f !== 'ACL' && !isInternalField(f) && !hidden.has(f),
    );
  }

  /** The first declared name of `declaredIn` that matches no column, if any. */
  protected unresolvedName(
    className: string,
    declaredIn: UnresolvedName['declaredIn'],
  ): UnresolvedName | undefined {
    return this.declaredNames(className)?.unresolved.find((u) => u.declaredIn === declaredIn);
  }

  /**
   * Why this agent may not see a class (hidden, or outside its `classes` filter), or undefined.
   * Asked for every pointer of every row, so memoized per agent; the memo is dropped whenever the
   * registry changes (a class hidden at runtime is refused by agents created before).
   */
  protected denialOf(className: string): 'hidden_class' | 'class_filter' | undefined {
    this.syncWithRegistry();
    let denial = this.deniedCache.get(className);
    if (denial === undefined) {
      denial = this.metadata.isHidden(className, this.identity.usingMasterKey)
        ? 'hidden_class'
        : passesListFilter(this.classFilter, this.metadata.nameVariants(className))
          ? null
          : 'class_filter';
      this.deniedCache.set(className, denial);
    }
    return denial ?? undefined;
  }

  /** Drops the per-agent memos when the registry changed since they were built. */
  protected syncWithRegistry(): void {
    if (this.memoVersion === this.metadata.version) return;
    this.deniedCache.clear();
    this.allowSets.clear();
    this.declaredMemo.clear();
    this.memoVersion = this.metadata.version;
  }

  /** Hidden, or outside this agent's `classes` filter. Used for redaction (no throw). */
  isDenied(className: string): boolean {
    return this.denialOf(className) !== undefined;
  }

  /** Throws the access refusal for a class this agent may not see; `subject` opens the message. */
  protected assertNotDenied(className: string, subject: string): void {
    const kind = this.denialOf(className);
    if (kind === 'hidden_class') {
      // Worded like a missing class: a hidden class's existence is not confirmed.
      throw new AccessDeniedError(`${subject} '${className}' not found.`, {
        kind: 'class_not_found',
      });
    }
    if (kind === 'class_filter') {
      throw new AccessDeniedError(
        `${subject} '${className}' is outside this agent's classes: allowlist`,
        {
          kind,
        },
      );
    }
  }

  /** Refuses classes the agent may not reach, with the reason in `details.kind`. */
  assertClassAccessible(className: unknown): void {
    if (typeof className !== 'string' || !className) {
      throw new AgentValidationError('class_name is required.');
    }
    if (!CLASS_NAME_PATTERN.test(className)) {
      throw new AgentValidationError(
        `'${className}' is not a valid class name (letters, digits and underscores).`,
      );
    }
    this.assertNotDenied(className, 'Class');
  }

  /**
   * The gate for every class name an agent sends (top-level or inside a subquery): the `classes`
   * filter, then hidden and nonexistent classes, which get one and the same answer so that no
   * tool can be used to learn that a hidden class exists. Suggestions come only from classes this
   * agent may see.
   */
  async requireReadableClass(className: unknown): Promise<string> {
    let schemas = await this.schemas.all();
    if (
      typeof className === 'string' &&
      CLASS_NAME_PATTERN.test(className) &&
      !schemas.has(className) &&
      this.denialOf(className) === undefined &&
      this.schemas.fresh
    ) {
      // The class may have been created after the schemas were cached (a seed, a migration, a
      // class made through Parse a moment ago): ask Parse again before calling it unknown. Hidden
      // classes and names that cannot be classes never cause a fetch.
      schemas = await this.schemas.fresh();
    }
    return this.requireReadableClassIn(className, schemas);
  }

  /**
   * requireReadableClass against schemas the caller already holds (the pipeline validator checks
   * every class a pipeline names synchronously, with the schemas loaded once).
   */
  requireReadableClassIn(className: unknown, schemas: ReadonlyMap<string, ParseSchema>): string {
    if (typeof className !== 'string' || !className) {
      throw new AgentValidationError('class_name is required.');
    }
    if (!CLASS_NAME_PATTERN.test(className)) {
      throw new AgentValidationError(
        `'${className}' is not a valid class name (letters, digits and underscores).`,
      );
    }
    if (this.denialOf(className) === 'class_filter') this.assertNotDenied(className, 'Class');
    this.schemaSnapshot = schemas;
    if (this.denialOf(className) === undefined && schemas.has(className)) return className;
    throw this.classNotFound(className, [...schemas.keys()]);
  }

  /** The refusal for a class that is hidden or does not exist (deliberately indistinguishable). */
  protected classNotFound(className: string, known: readonly string[]): AccessDeniedError {
    const visible = known.filter((name) => !this.isDenied(name));
    const suggestions = closestNames(className, visible);
    const hint = suggestions.length
      ? ` Did you mean ${suggestions.map((n) => `'${n}'`).join(' or ')}?`
      : '';
    return new AccessDeniedError(
      `Class '${className}' not found.${hint} Call get_all_schemas for the classes you can query.`,
      { kind: 'class_not_found' },
    );
  }

  tenant(className: string): ResolvedTenant | undefined {
    const tenant = resolveTenantScope(this.meta(className), this.identity);
    const missing = tenant && this.unresolvedName(className, '@AgentTenantScope');
    if (missing) {
      this.misdeclared(
        className,
        `its model's @AgentTenantScope`,
        missing.name,
        'The model must name the tenant column (or the property mapped to it with @AgentField({ field })).',
      );
    }
    return tenant;
  }

  /** The class's canonical filter in column names; refused when it names no column of the class. */
  canonicalFilter(className: string): Where | undefined {
    const canonical = this.meta(className)?.canonicalFilter;
    const missing = canonical && this.unresolvedName(className, '@AgentCanonicalFilter');
    if (missing) {
      this.misdeclared(
        className,
        `its model's @AgentCanonicalFilter`,
        missing.name,
        'The model must name a column in the filter; apply_canonical_filter: false reads without it.',
      );
    }
    return canonical;
  }

  /**
   * The per-agent filter layers for a class: its own entry (any name variant) and `default`, with
   * each field named as its column (a model property or the other spelling of a column is
   * accepted). A filter field that is no column of the class is refused, not run as an empty read;
   * with `strict: false` (introspection) it is left as written.
   */
  filterLayers(
    className: string,
    { strict = true }: { strict?: boolean } = {},
  ): { perClass?: Where; defaultFilter?: Where } {
    const variant = this.metadata
      .nameVariants(className)
      .find((n) => this.filters[n] !== undefined);
    const perClass = variant === undefined ? undefined : this.filters[variant];
    const inColumns = (filter: Where, option: string) =>
      this.filterInColumns(className, filter, option, strict);
    return {
      perClass: perClass && inColumns(perClass, `filters.${variant}`),
      defaultFilter: this.filters.default && inColumns(this.filters.default, 'filters.default'),
    };
  }

  /** An agent filter with its fields as the class's columns (see filterLayers). */
  protected filterInColumns(
    className: string,
    filter: Where,
    option: string,
    strict: boolean,
  ): Where {
    const schema = this.schemaSnapshot?.get(className);
    if (!schema || !Object.keys(schema.fields).length) return filter;
    const columns = new Set(Object.keys(schema.fields));
    const properties = this.meta(className)?.propertyToWire ?? {};
    return renameWhereFields(filter, (name) => {
      const declared = Object.prototype.hasOwnProperty.call(properties, name)
        ? properties[name]
        : name;
      const { column } = columnFor(declared, columns);
      if (column === undefined && strict) {
        this.misdeclared(
          className,
          `the agent's ${option} option`,
          name,
          `Fix the agent's ${option} (its options are set by the application).`,
        );
      }
      return column;
    });
  }

  /** Combined per-agent filter for a class (the public `filterFor`); never refuses. */
  filterFor(className: string): Where | undefined {
    const { perClass, defaultFilter } = this.filterLayers(className, { strict: false });
    const w = composeWhere({ perClass, defaultFilter });
    return Object.keys(w).length ? w : undefined;
  }

  async schema(className: string): Promise<ParseSchema | undefined> {
    return this.schemas.get(className);
  }

  /** Drops cached schemas after a schema change, so the next read sees it. */
  schemasChanged(): void {
    this.schemas.invalidate();
  }

  async allSchemas(): Promise<ParseSchema[]> {
    return [...(await this.schemas.all()).values()];
  }

  /** Field types for normalization: the Parse schema, completed by @BelongsTo declarations. */
  async fieldTypes(className: string): Promise<Record<string, FieldType>> {
    const schema = await this.schemas.get(className);
    const out: Record<string, FieldType> = {};
    for (const [name, f] of Object.entries(schema?.fields ?? {}))
      out[name] = { type: f.type, targetClass: f.targetClass };
    for (const [field, target] of Object.entries(this.meta(className)?.references ?? {})) {
      out[field] ??= { type: 'Pointer', targetClass: target };
    }
    return out;
  }

  protected allowlist(className: string): string[] | undefined {
    return this.meta(className)?.fields;
  }

  /** The allowlist as a Set (looked up for every key of every row). */
  protected allowSet(className: string): ReadonlySet<string> | undefined {
    this.syncWithRegistry();
    const list = this.allowlist(className);
    // Keyed by the list itself: a list matched again with a newer schema is a new list.
    let entry = this.allowSets.get(className);
    if (entry === undefined || entry.list !== list) {
      entry = { list, set: list ? new Set(list) : undefined };
      this.allowSets.set(className, entry);
    }
    return entry.set;
  }

  /**
   * The allowlisted fields a message may name as usable: internal fields left out, and every field
   * a protectedFields entry of the class names (or Parse's default `_User.email`), unless the
   * agent holds the master key. Which entries apply to this user is not resolved here, so a field
   * that might be protected for them is never listed: a refusal must not reveal that an
   * allowlisted field exists but is hidden from this user.
   */
  usableFields(className: string): string[] {
    const allowed = this.allowlist(className) ?? [];
    const hidden = this.identity.usingMasterKey
      ? new Set<string>()
      : protectedAnywhere(className, this.schemaSnapshot?.get(className));
    return allowed.filter((f) => !isInternalField(f) && !hidden.has(f));
  }

  protected denyField(className: string, field: string, where: string): never {
    const allowed = this.usableFields(className);
    const preview = allowed.slice(0, ALLOWLIST_PREVIEW_CAP);
    const more =
      allowed.length > preview.length ? ` (+${allowed.length - preview.length} more)` : '';
    const storage = /^_p_(.+)$/.exec(field);
    if (storage && allowed.includes(storage[1])) {
      throw new AccessDeniedError(
        `${where} field '${field}' is Parse's storage form of '${storage[1]}'; use '${storage[1]}' instead.`,
        {
          kind: 'storage_form_field_ref',
          deniedField: field,
          allowedFields: preview,
          suggestedRewrite: storage[1],
        },
      );
    }
    const column = this.propertyColumn(className, field.split('.')[0]);
    if (column && allowed.includes(column)) {
      throw new AccessDeniedError(
        `${where} field '${field}' is the model's property name; the field is '${column}' (tools take field names as get_schema lists them).`,
        {
          kind: 'field_denied',
          deniedField: field,
          allowedFields: preview,
          suggestedRewrite: column,
        },
      );
    }
    throw new AccessDeniedError(
      `${where} field '${field}' is not one this agent can use on '${className}' (its agent_fields allowlist; whether such a field exists is not said).${suggestionHint(field.split('.')[0], allowed)} Allowed: ${preview.join(', ')}${more}`,
      { kind: 'field_denied', deniedField: field, allowedFields: preview },
    );
  }

  /**
   * Each field must be one this agent may use on the class (allowlist, not internal, known when
   * there is no allowlist); `where` names the argument in the refusal.
   */
  checkFields(className: string, fields: readonly string[], where: string): void {
    for (const field of fields) {
      if (typeof field !== 'string' || !FIELD_PATH_PATTERN.test(field)) {
        throw new AgentValidationError(`${where}: '${String(field)}' is not a field name.`);
      }
      this.checkField(className, field, where);
    }
  }

  protected checkField(className: string, field: string, where: string): void {
    if (isInternalField(field)) {
      throw new AccessDeniedError(`${where} field '${field}' is an internal Parse field.`, {
        kind: 'internal_field',
        deniedField: field,
      });
    }
    const allowed = this.allowlist(className);
    const root = field.split('.')[0];
    if (allowed?.includes(root)) return;
    this.refuseUnresolvedField(className, field, where);
    if (allowed) this.denyField(className, field, where);
    // Only without an allowlist: there every field is visible, so "no such field" hides nothing.
    // A schema with no fields at all says nothing about which names exist.
    const schema = allowed ? undefined : this.schemaSnapshot?.get(className);
    const known = schema && Object.keys(schema.fields).length > 0 ? schema.fields : undefined;
    if (known && !(root in known) && !BUILTIN_FIELDS.has(root)) {
      const visible = Object.keys(known).filter((f) => f !== 'ACL' && !isInternalField(f));
      const column = this.propertyColumn(className, root);
      const suggestions =
        column && visible.includes(column) ? [column] : closestNames(root, visible);
      const hint = suggestions.length
        ? ` Did you mean ${suggestions.map((n) => `'${n}'`).join(' or ')}?`
        : '';
      throw new UnknownFieldError(
        `${where} field '${field}': class '${className}' has no field '${root}'.${hint} get_schema lists its fields.`,
        field,
        suggestions,
      );
    }
  }

  /** The column a model property of the class maps to, when `name` is such a property. */
  protected propertyColumn(className: string, name: string): string | undefined {
    const properties = this.meta(className)?.propertyToWire ?? {};
    if (!Object.prototype.hasOwnProperty.call(properties, name)) return undefined;
    return properties[name] !== name ? properties[name] : undefined;
  }

  /**
   * A field the model declares (allowlist, join or large fields, field docs) that is no column of
   * the class: the refusal says so and names the fields that exist, where otherwise the read would
   * run on a column that is not there and come back empty.
   */
  protected refuseUnresolvedField(className: string, field: string, where: string): void {
    const root = field.split('.')[0];
    const declared = this.declaredNames(className)?.unresolved.find(
      (u) => u.name === root && FIELD_DECLARATIONS.has(u.declaredIn),
    );
    if (!declared) return;
    const usable = this.fieldsForMessage(className);
    const suggestions = declared.candidates ?? closestNames(root, usable);
    throw new UnknownFieldError(
      `${where} field '${field}': the model of '${className}' declares '${root}' (${declared.declaredIn}), but the class has no such field. Fields you can use: ${usable.join(', ') || '(none)'}.`,
      field,
      suggestions,
    );
  }
}

/** Parse Server's default `protectedFields` option, which /schemas does not show. */
const SERVER_DEFAULT_PROTECTED: Readonly<Record<string, readonly string[]>> = { _User: ['email'] };

/** Every field any protectedFields entry of the class names, plus the server default's. */
function protectedAnywhere(className: string, schema: ParseSchema | undefined): Set<string> {
  const out = new Set<string>(SERVER_DEFAULT_PROTECTED[className] ?? []);
  const table = schema?.classLevelPermissions?.protectedFields;
  if (isPlainObject(table)) {
    for (const list of Object.values(table)) {
      if (Array.isArray(list)) for (const f of list) if (typeof f === 'string') out.add(f);
    }
  }
  return out;
}

function suggestionHint(name: string, allowed: readonly string[]): string {
  const close = closestNames(name, allowed);
  return close.length ? ` Did you mean ${close.map((n) => `'${n}'`).join(' or ')}?` : '';
}
