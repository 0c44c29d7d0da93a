import { ALWAYS_KEEP_FIELDS, CLASS_NAME_PATTERN } from '../core/constants';
import { BUILTIN_HIDDEN_CLASSES, type UnregisteredClassPolicy } from './builtin-hidden-classes';
import { ParseAgentConfigError } from '../core/errors';
import { hiddenCharacters } from '../core/hidden-characters';
import { securityBanner } from '../core/security-banner';
import type { Where } from '../query/constraint-translator';
import { renameWhereFields } from './declared-names';
import { METADATA } from './metadata.constants';
import { checkSdkInternals, isParseObjectModel, sdkModelClassName } from './parse-object-model';
import {
  isIdentifier,
  MAX_CLASS_TEXT,
  MAX_FIELD_TEXT,
  schemaText,
  schemaWithCleanText,
} from './schema-text';
import type {
  AgentMethodDeclaration,
  SearchableDeclaration,
  ClassMetadata,
  ClassRef,
  FieldDoc,
  ModelClass,
  RelationDeclaration,
  RelationEdge,
  TenantScope,
} from './metadata.types';

export interface HiddenEntry {
  except?: 'masterKey';
}

export interface MetadataRegistryOptions {
  /**
   * Classes no registered model declares: 'hidden' (default, fail closed: an agent reaches only
   * what the application modelled) or 'visible'. `unhide(name)` opens one class either way.
   */
  unregisteredClasses?: UnregisteredClassPolicy;
}

/**
 * The compiled view of every registered model: class names, allowlists in wire names, tenant
 * scopes, canonical filters, docs, relations, and the hidden-class registry (Parse's own internal
 * classes are hidden from the start).
 */
export class MetadataRegistry {
  protected readonly classes = new Map<string, ClassMetadata>();
  protected readonly byModel = new Map<ModelClass, ClassMetadata>();
  protected readonly hidden = new Map<string, HiddenEntry>();
  /** Unregistered classes opened by name with unhide() while unregistered classes are hidden. */
  protected readonly exposed = new Set<string>();
  protected changes = 0;
  readonly unregisteredClasses: UnregisteredClassPolicy;

  /** Bumped by every register, hide and unhide, so caches built on the registry know to refresh. */
  get version(): number {
    return this.changes;
  }

  constructor(options: MetadataRegistryOptions = {}) {
    const policy = options.unregisteredClasses ?? 'hidden';
    if (policy !== 'hidden' && policy !== 'visible') {
      throw new ParseAgentConfigError(
        `unregisteredClasses must be 'hidden' or 'visible' (got ${JSON.stringify(policy)}).`,
      );
    }
    this.unregisteredClasses = policy;
    for (const name of BUILTIN_HIDDEN_CLASSES) this.hidden.set(name, {});
  }

  /** Registers decorated models. Re-registering the same model is a no-op. */
  register(...models: ModelClass[]): this {
    for (const model of models) {
      if (typeof model !== 'function') {
        throw new ParseAgentConfigError(
          `Cannot register ${String(model)} as a model: pass the decorated class itself.`,
        );
      }
      if (this.byModel.has(model)) continue;
      const meta = this.compile(model);
      const existing = this.classes.get(meta.className);
      if (existing && existing.model !== model) {
        throw new ParseAgentConfigError(
          `Parse class '${meta.className}' is declared by both ${existing.modelName} and ${meta.modelName}; keep one model per class.`,
        );
      }
      this.classes.set(meta.className, meta);
      this.byModel.set(model, meta);
      const hidden = Reflect.getMetadata(METADATA.hidden, model) as HiddenEntry | undefined;
      if (hidden) this.hidden.set(meta.className, { except: hidden.except });
      this.changes++;
    }
    return this;
  }

  get(className: string): ClassMetadata | undefined {
    return this.classes.get(className);
  }

  all(): ClassMetadata[] {
    return [...this.classes.values()];
  }

  /** A class name, or the Parse class a registered model maps to. */
  resolveClassName(ref: string | ModelClass): string {
    if (typeof ref === 'string') return ref;
    const meta = this.byModel.get(ref);
    if (meta) return meta.className;
    return modelClassName(ref);
  }

  /** Every spelling a class may be named by: its Parse name, without a leading `_`, the model's name. */
  nameVariants(className: string): string[] {
    const meta = this.classes.get(className);
    const out = new Set([className]);
    if (className.startsWith('_')) out.add(className.slice(1));
    if (meta) out.add(meta.modelName);
    return [...out];
  }

  /** Hides a class by name (for classes without a model, or at runtime). */
  hide(className: string, entry: HiddenEntry = {}): void {
    if (!CLASS_NAME_PATTERN.test(className)) {
      throw new ParseAgentConfigError(`Cannot hide "${className}": not a valid Parse class name.`);
    }
    if (entry.except !== undefined && entry.except !== 'masterKey') {
      throw new ParseAgentConfigError(`hide(): except only accepts 'masterKey'.`);
    }
    this.hidden.set(className, { except: entry.except });
    this.changes++;
  }

  /**
   * Makes a hidden class reachable again (including Parse's built-in hidden classes). Prints a
   * security banner, because under the master key nothing but the declared allowlists, filters and
   * tenant scopes then stands between agents and the class. Returns false if it was not hidden.
   */
  unhide(className: string): boolean {
    const wasHidden = this.isHidden(className, false);
    this.hidden.delete(className);
    if (this.unregisteredClasses === 'hidden' && !this.classes.has(className))
      this.exposed.add(className);
    if (!wasHidden || this.isHidden(className, false)) return false;
    this.changes++;
    securityBanner(
      `unhide:${className}`,
      `Class '${className}' was unhidden: every agent can now reach it. Master-key agents bypass ACLs and CLPs, so only @AgentFields, canonical filters and tenant scopes limit what they see (credential columns stay stripped).`,
      false,
    );
    return true;
  }

  hiddenEntry(className: string): HiddenEntry | undefined {
    for (const name of this.nameVariants(className)) {
      const entry = this.hidden.get(name);
      if (entry) return entry;
    }
    return undefined;
  }

  /** Hidden for this agent? `except: 'masterKey'` classes stay reachable for master-key agents only. */
  isHidden(className: string, usingMasterKey = false): boolean {
    const entry = this.hiddenEntry(className);
    if (entry) return !(entry.except === 'masterKey' && usingMasterKey);
    return this.isUnregisteredHidden(className);
  }

  /** Hidden only because no model declares it (and `unregisteredClasses` is 'hidden'). */
  isUnregisteredHidden(className: string): boolean {
    if (this.unregisteredClasses === 'visible') return false;
    return !this.nameVariants(className).some(
      (name) => this.classes.has(name) || this.exposed.has(name),
    );
  }

  hiddenClassNames(): string[] {
    return [...this.hidden.keys()];
  }

  /** Edges between registered models from @BelongsTo and @HasMany({ through: 'relation' }). */
  relationGraph(): RelationEdge[] {
    const visible = this.all().filter((m) => m.visible);
    const candidates = visible.length
      ? visible
      : this.all().filter(
          (m) => !m.className.startsWith('_') || ['_User', '_Role'].includes(m.className),
        );
    const edges = new Map<string, RelationEdge>();
    for (const meta of candidates) {
      for (const rel of meta.relations) {
        const target = this.resolveRef(rel.target);
        const field = rel.field ?? meta.propertyToWire[rel.property] ?? rel.property;
        let edge: RelationEdge | undefined;
        if (rel.kind === 'belongsTo') {
          edge = {
            from: target,
            to: meta.className,
            via: `${meta.className}.${field}`,
            cardinality: '1:N',
          };
        } else if (rel.through === 'relation') {
          edge = {
            from: meta.className,
            to: target,
            via: `${meta.className}.${field}`,
            cardinality: 'N:M',
          };
        }
        if (edge) edges.set(`${edge.from}|${edge.to}|${edge.via}`, edge);
      }
    }
    return [...edges.values()];
  }

  relationsFor(className: string): { outgoing: RelationEdge[]; incoming: RelationEdge[] } {
    const graph = this.relationGraph();
    return {
      outgoing: graph.filter((e) => e.from === className),
      incoming: graph.filter((e) => e.to === className),
    };
  }

  protected resolveRef(ref: ClassRef): string {
    if (typeof ref === 'string') return ref;
    const resolved = ref();
    return typeof resolved === 'string' ? resolved : this.resolveClassName(resolved);
  }

  protected compile(model: ModelClass): ClassMetadata {
    const get = <T>(key: string): T | undefined => Reflect.getMetadata(key, model) as T | undefined;
    if (isParseObjectModel(model)) checkSdkInternals(model);
    const className = modelClassName(model);
    if (!CLASS_NAME_PATTERN.test(className)) {
      throw new ParseAgentConfigError(
        `Model ${model.name} maps to an invalid Parse class name '${className}'; set one with @ParseClass('Name').`,
      );
    }
    const docs = get<Record<string, FieldDoc>>(METADATA.fieldDocs) ?? {};
    const propertyToWire: Record<string, string> = {};
    const fieldDocs: Record<string, FieldDoc> = {};
    for (const doc of Object.values(docs)) {
      propertyToWire[doc.property] = doc.field;
      fieldDocs[doc.field] = cleanFieldDoc(doc);
    }
    const relations = get<RelationDeclaration[]>(METADATA.relations) ?? [];
    const references: Record<string, string> = {};
    for (const rel of relations) {
      if (rel.kind !== 'belongsTo') continue;
      const field = rel.field ?? propertyToWire[rel.property] ?? rel.property;
      propertyToWire[rel.property] ??= field;
      // Resolved lazily: the target model may be declared later in the file.
      // Configurable: a redeclared pointer (e.g. overridden in a subclass) replaces the earlier one.
      Object.defineProperty(references, field, {
        enumerable: true,
        configurable: true,
        get: () => this.resolveRef(rel.target),
      });
    }
    // Declared names may be properties: each becomes its column here, once for every decorator.
    const column = (name: string) =>
      Object.prototype.hasOwnProperty.call(propertyToWire, name) ? propertyToWire[name] : name;
    const columns = (names: string[] | undefined) =>
      names ? [...new Set(names.map(column))] : undefined;
    const fields = columns(get<string[]>(METADATA.fields));
    const tenantScope = get<TenantScope>(METADATA.tenantScope);
    const canonicalFilter = get<Where>(METADATA.canonicalFilter);
    return {
      className,
      modelName: model.name,
      model,
      // Decorator text reaches models as written: cleaned and capped here (see schema-text.ts).
      description: schemaText(get<string>(METADATA.description), MAX_CLASS_TEXT),
      usage: schemaText(get<string>(METADATA.usage), MAX_CLASS_TEXT),
      visible: get<boolean>(METADATA.visible) ?? false,
      fields: fields ? [...new Set([...ALWAYS_KEEP_FIELDS, ...fields])] : undefined,
      joinFields: columns(get<string[]>(METADATA.joinFields)),
      largeFields: columns(get<string[]>(METADATA.largeFields)) ?? [],
      canonicalFilter: canonicalFilter
        ? Object.freeze(renameWhereFields(canonicalFilter, column))
        : undefined,
      tenantScope: tenantScope ? { ...tenantScope, field: column(tenantScope.field) } : undefined,
      tenantShared: get<boolean>(METADATA.tenantShared) === true,
      allowCollscan: get<boolean>(METADATA.allowCollscan) ?? false,
      fieldDocs,
      propertyToWire,
      references,
      relations,
      methods: shownMethods(model, get<AgentMethodDeclaration[]>(METADATA.methods) ?? []),
      searchable: searchableColumns(get<SearchableDeclaration>(METADATA.searchable), columns),
    };
  }
}

/** `@AgentSearchable` with its declared names turned into columns. */
function searchableColumns(
  declared: SearchableDeclaration | undefined,
  columns: (names: string[]) => string[] | undefined,
): SearchableDeclaration | undefined {
  if (!declared) return undefined;
  return Object.freeze({
    fields: columns(declared.fields) ?? [],
    filterFields: columns(declared.filterFields) ?? [],
    chunk: { ...declared.chunk },
  });
}

/** A field's documentation with its description and allowed values' meanings cleaned. */
function cleanFieldDoc(doc: FieldDoc): FieldDoc {
  const allowedValues = doc.allowedValues
    // A value is what the model will filter by: one it cannot read as written is left out.
    ?.filter((v) => !hiddenCharacters().test(v.value))
    .map((v) => ({ value: v.value, description: schemaText(v.description, MAX_FIELD_TEXT) ?? '' }));
  return {
    ...doc,
    description: schemaText(doc.description, MAX_FIELD_TEXT),
    ...(allowedValues ? { allowedValues } : {}),
  };
}

/** Agent methods with identifier names (others are left out, with a warning) and clean docs. */
function shownMethods(
  model: ModelClass,
  methods: AgentMethodDeclaration[],
): AgentMethodDeclaration[] {
  return methods.flatMap((method) => {
    if (!isIdentifier(method.name)) {
      securityBanner(
        `agent-method-name:${model.name}:${method.name}`,
        `@AgentMethod on ${model.name}: the method name ${JSON.stringify(method.name)} is not an identifier, so agents are not offered it.`,
      );
      return [];
    }
    return [
      {
        ...method,
        description: schemaText(method.description, MAX_CLASS_TEXT),
        ...(method.parameters ? { parameters: schemaWithCleanText(method.parameters) } : {}),
      },
    ];
  });
}

/**
 * The Parse class a model maps to: its @ParseClass name; for a Parse.Object subclass without one,
 * the className the SDK gives its instances; else the class's own name.
 */
function modelClassName(model: ModelClass): string {
  const declared = Reflect.getMetadata(METADATA.parseClass, model) as string | undefined;
  const derived = isParseObjectModel(model) ? sdkModelClassName(model, declared) : undefined;
  return declared ?? derived ?? model.name;
}
