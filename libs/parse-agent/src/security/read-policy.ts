import {
  checkWhereValueTypes,
  collectWhereFields,
  normalizeWhere,
  validateWhere,
  type Where,
} from '../query/constraint-translator';
import { isInternalField } from '../query/internal-fields';
import { redact, type RedactOptions } from './redactor';
import { assertNoTenantSpoof, type ResolvedTenant } from './tenant-scope';
import { composeWhere } from '../query/where-composer';
import {
  ALWAYS_KEEP_FIELDS,
  FIELD_PATH_PATTERN,
  MAX_INCLUDE_FIELDS,
  MAX_KEYS_FIELDS,
} from '../core/constants';
import { AccessDeniedError, AgentValidationError, InvalidQueryError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { ClassAccessPolicy } from './class-access-policy';

export interface PlannedRead {
  where: Where;
  keys?: string[];
  include?: string[];
  truncatedIncludeFields?: Record<string, string[]>;
  tenant?: ResolvedTenant;
  /** Large fields left out of `keys` because the caller did not name them (elideLargeFields). */
  elidedFields?: string[];
  /** Top-level fields the caller asked for, by name or by asking for every field (see withheldFields). */
  askedFields?: string[];
  /** Dotted keys into joined rows that the target's allowlist removes ("customer.email"). */
  notAllowlistedKeys?: string[];
}

export interface ReadRequest {
  where?: unknown;
  keys?: unknown;
  include?: unknown;
  order?: unknown;
  applyCanonicalFilter?: boolean;
  /** false: check each fetched row against the tenant instead (reads by id). */
  injectTenant?: boolean;
  /** Leave `@AgentLargeFields` out unless `keys` names them (list reads). */
  elideLargeFields?: boolean;
}

/**
 * Everything one agent's tool calls must pass through: the class gate, field allowlists, tenant
 * scope, filter composition, include checks and response redaction. Built-in tools use it; custom
 * tools can too (`context.access`).
 */
export class ReadPolicy extends ClassAccessPolicy {
  /**
   * The where an agent's read runs with: caller where validated (operators, internal fields, cost
   * caps, allowlist, tenant spoofing), every subquery inside it planned like a read of its own
   * class, then ANDed with the canonical filter, the per-agent filters and the tenant scope and
   * normalized to Parse's storage shapes.
   */
  async planWhere(
    className: string,
    callerWhere: unknown,
    applyCanonical = true,
    injectTenant = true,
  ): Promise<{ where: Where; tenant?: ResolvedTenant }> {
    const caller = validateWhere(callerWhere, { limits: this.queryLimits });
    const tenant = this.tenant(className);
    const where = await this.scopeWhere(className, caller, {
      canonical: applyCanonical,
      tenant: injectTenant,
      context: 'where',
    });
    return { where, tenant };
  }

  /**
   * One class's where under this agent's policy: caller fields checked, nested subqueries scoped,
   * canonical filter, per-agent filters and tenant ANDed in. Used for the outer class and,
   * recursively, for every class a subquery names, so an inner query can never see more than a
   * top-level read of that class would.
   */
  protected async scopeWhere(
    className: string,
    caller: Where,
    options: { canonical: boolean; tenant: boolean; context: string },
  ): Promise<Where> {
    const tenant = this.tenant(className);
    // Tenant spoofing first: naming another tenant is refused as such, whatever the allowlist says.
    if (tenant) assertNoTenantSpoof(caller, tenant, className);
    for (const field of collectWhereFields(caller))
      this.checkField(className, field, options.context);
    checkWhereValueTypes(caller, await this.fieldTypes(className));
    const scoped = await this.scopeSubqueries(className, caller);
    const { perClass, defaultFilter } = this.filterLayers(className);
    const composed = composeWhere({
      caller: scoped,
      canonical: options.canonical ? this.canonicalFilter(className) : undefined,
      perClass,
      defaultFilter,
      tenant: tenant && options.tenant ? { [tenant.field]: tenant.value } : undefined,
    });
    return normalizeWhere(composed, await this.fieldTypes(className), (c) => this.isDenied(c));
  }

  /** Copies a validated where, replacing each subquery's inner where by its scoped form. */
  protected async scopeSubqueries(className: string, where: Where): Promise<Where> {
    const out: Where = {};
    for (const [key, value] of Object.entries(where)) {
      if ((key === '$or' || key === '$and' || key === '$nor') && Array.isArray(value)) {
        const clauses: Where[] = [];
        for (const clause of value as Where[])
          clauses.push(await this.scopeSubqueries(className, clause));
        out[key] = clauses;
      } else if (key === '$relatedTo') {
        await this.checkRelatedTo(className, value as Where);
        out[key] = value;
      } else if (isPlainObject(value) && typeof value.__type !== 'string') {
        out[key] = await this.scopeFieldOperators(value);
      } else {
        out[key] = value;
      }
    }
    return out;
  }

  protected async scopeFieldOperators(ops: Where): Promise<Where> {
    const out: Where = {};
    for (const [op, operand] of Object.entries(ops)) {
      if ((op === '$inQuery' || op === '$notInQuery') && isPlainObject(operand)) {
        const inner = await this.innerQuery(op, operand);
        out[op] = inner;
      } else if ((op === '$select' || op === '$dontSelect') && isPlainObject(operand)) {
        const query = await this.innerQuery(op, operand.query as Where);
        this.checkField(query.className, String(operand.key), `${op} key`);
        out[op] = { query, key: operand.key };
      } else if (op === '$not' && isPlainObject(operand)) {
        out[op] = await this.scopeFieldOperators(operand);
      } else {
        out[op] = operand;
      }
    }
    return out;
  }

  /** A subquery's `{ className, where }` planned exactly as a top-level read of that class. */
  protected async innerQuery(
    op: string,
    query: Where,
  ): Promise<{ className: string; where: Where }> {
    const className = await this.requireReadableClass(query.className);
    const where = await this.scopeWhere(className, (query.where as Where | undefined) ?? {}, {
      canonical: true,
      tenant: true,
      context: `${op} (${className}) where`,
    });
    return { className, where };
  }

  /**
   * `$relatedTo` names one object and a relation key on it. Its class must be readable and the key
   * allowlisted; and because the object itself cannot be checked against a tenant or a filter
   * inside the query, a class with either is refused rather than answered unscoped.
   */
  protected async checkRelatedTo(outerClass: string, value: Where): Promise<void> {
    const object = value.object as Where;
    const className = await this.requireReadableClass(object.className);
    const key = String(value.key);
    this.checkField(className, key, '$relatedTo key');
    const scoped =
      this.tenant(className) !== undefined ||
      this.meta(className)?.canonicalFilter !== undefined ||
      this.filterFor(className) !== undefined;
    if (scoped) {
      throw new InvalidQueryError(
        `$relatedTo cannot be used with '${className}': that class is tenant-scoped or filtered for this agent, and the object it names cannot be checked inside the query. Query '${outerClass}' with a pointer or $inQuery constraint instead.`,
      );
    }
  }

  /** Validates `order` ("-a,b"): allowlisted, non-internal field paths. */
  checkOrder(className: string, order: unknown): string | undefined {
    if (order === undefined || order === null || order === '') return undefined;
    if (typeof order !== 'string')
      throw new AgentValidationError('order must be a string such as "-createdAt,name".');
    for (const raw of order.split(',')) {
      const field = raw.trim().replace(/^-/, '');
      if (!FIELD_PATH_PATTERN.test(field))
        throw new AgentValidationError(`order: '${raw.trim()}' is not a field name.`);
      this.checkField(className, field, 'order');
    }
    return order;
  }

  protected checkPathList(value: unknown, name: string, max: number): string[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
      throw new AgentValidationError(`${name} must be an array of field names.`);
    }
    if (value.length > max)
      throw new AgentValidationError(`${name} accepts at most ${max} entries.`);
    for (const v of value as string[]) {
      if (!FIELD_PATH_PATTERN.test(v))
        throw new AgentValidationError(`${name}: '${v}' is not a valid field path.`);
    }
    return value.length ? [...new Set(value as string[])] : undefined;
  }

  /** Follows each include path through pointer fields, refusing hidden or filtered-out targets. */
  async checkInclude(className: string, include: unknown): Promise<string[] | undefined> {
    const paths = this.checkPathList(include, 'include', MAX_INCLUDE_FIELDS);
    if (!paths) return undefined;
    for (const path of paths) {
      let current = className;
      const segments = path.split('.');
      this.checkField(className, segments[0], 'include');
      for (const segment of segments) {
        const target = (await this.fieldTypes(current))[segment];
        if (!target || target.type !== 'Pointer' || !target.targetClass) break;
        if (this.denialOf(target.targetClass) === 'hidden_class') {
          // The target's name is not said: get_schema does not reveal it either.
          throw new AccessDeniedError(
            `include '${path}': '${segment}' points to a class this agent cannot read; leave it out of include.`,
            { kind: 'class_not_found' },
          );
        }
        this.assertNotDenied(target.targetClass, 'Pointer-include target');
        current = target.targetClass;
      }
    }
    return paths;
  }

  /** keys the read projects: the caller's (each allowlisted) or, with an allowlist, the allowlist. */
  effectiveKeys(className: string, keys: unknown): string[] | undefined {
    const requested = this.checkPathList(keys, 'keys', MAX_KEYS_FIELDS);
    const allowed = this.allowlist(className);
    if (requested) {
      for (const k of requested) this.checkField(className, k, 'keys');
      return requested;
    }
    return allowed ? [...allowed] : undefined;
  }

  /**
   * The keys a joined read of `className` takes: the keys the caller named below the include (each
   * kept only when this class would show it: not internal, inside the allowlist), else what a
   * direct read of the class projects. A key this class would cut is not read at all; the plan
   * reports it (`notAllowlistedKeys`).
   */
  joinedKeys(className: string, requested: readonly string[] | undefined): string[] | undefined {
    if (!requested?.length) return this.effectiveKeys(className, undefined);
    const allowed = this.allowSet(className);
    const always = ALWAYS_KEEP_FIELDS as readonly string[];
    const kept = requested.filter((key) => {
      const root = key.split('.')[0];
      if (!FIELD_PATH_PATTERN.test(key) || isInternalField(root) || isInternalField(key)) {
        return false;
      }
      return !allowed || allowed.has(root) || always.includes(root);
    });
    return kept.length ? [...new Set(kept)] : ['objectId'];
  }

  /**
   * For one-hop includes whose pointer is among the keys, projects the joined row to the target's
   * join fields (or allowlist minus large fields) so a join never drags in columns the target hides
   * or megabytes of text. Returns the extra keys and, per pointer, every field of the target the
   * agent could read that the projection left out (large or not).
   */
  async projectIncludes(
    className: string,
    keys: string[] | undefined,
    include: string[] | undefined,
  ): Promise<{ keys?: string[]; truncated?: Record<string, string[]> }> {
    if (!keys?.length || !include?.length) return { keys };
    const types = await this.fieldTypes(className);
    const out = [...keys];
    const truncated: Record<string, string[]> = {};
    for (const path of include) {
      if (path.includes('.') || !keys.includes(path) || keys.some((k) => k.startsWith(`${path}.`)))
        continue;
      const target = types[path]?.targetClass;
      if (!target) continue;
      const meta = this.meta(target);
      const large = meta?.largeFields ?? [];
      let project: string[] | undefined;
      if (meta?.joinFields?.length) project = meta.joinFields;
      else if (meta?.fields) project = meta.fields.filter((f) => !large.includes(f));
      else if (large.length) {
        const schema = await this.schemas.get(target);
        project = Object.keys(schema?.fields ?? {}).filter(
          (f) => !large.includes(f) && f !== 'ACL',
        );
      }
      if (!project) continue;
      const readable =
        meta?.fields ??
        Object.keys((await this.schemas.get(target))?.fields ?? {}).filter((f) => f !== 'ACL');
      const kept = new Set<string>([...project, ...ALWAYS_KEEP_FIELDS]);
      const dropped = readable.filter((f) => !kept.has(f) && !isInternalField(f));
      for (const f of new Set([...project, ...ALWAYS_KEEP_FIELDS])) {
        if (!isInternalField(f)) out.push(`${path}.${f}`);
      }
      if (dropped.length) truncated[path] = dropped;
    }
    return {
      keys: [...new Set(out)],
      truncated: Object.keys(truncated).length ? truncated : undefined,
    };
  }

  /** Validates and plans a read: where, keys, include and their projections. */
  async planRead(className: string, request: ReadRequest): Promise<PlannedRead> {
    const { where, tenant } = await this.planWhere(
      className,
      request.where,
      request.applyCanonicalFilter !== false,
      request.injectTenant !== false,
    );
    const include = await this.checkInclude(className, request.include);
    let baseKeys = this.effectiveKeys(className, request.keys);
    const explicit = baseKeys !== undefined && request.keys !== undefined && request.keys !== null;
    let elidedFields: string[] | undefined;
    const large = this.meta(className)?.largeFields ?? [];
    if (request.elideLargeFields && !explicit && large.length > 0) {
      const all = baseKeys ?? (await this.readableSchemaFields(className));
      elidedFields = large.filter((f) => all.includes(f));
      if (elidedFields.length) baseKeys = all.filter((f) => !large.includes(f));
      else elidedFields = undefined;
    }
    const projected = await this.projectIncludes(className, baseKeys, include);
    const askedFields = explicit
      ? [...new Set(baseKeys!.map((k) => k.split('.')[0]))]
      : (baseKeys ?? (await this.readableSchemaFields(className)));
    return {
      where,
      keys: projected.keys,
      include,
      truncatedIncludeFields: projected.truncated,
      tenant,
      elidedFields,
      askedFields,
      notAllowlistedKeys: explicit
        ? await this.keysOutsideJoinAllowlists(className, baseKeys!)
        : undefined,
    };
  }

  /** Fields of a class an agent may name: schema fields minus ACL and internal ones. */
  protected async readableSchemaFields(className: string): Promise<string[]> {
    const schema = await this.schemas.get(className);
    return Object.keys(schema?.fields ?? {}).filter((f) => f !== 'ACL' && !isInternalField(f));
  }

  /** "pointer.field" keys whose field the pointer target's allowlist removes from joined rows. */
  protected async keysOutsideJoinAllowlists(className: string, keys: string[]): Promise<string[]> {
    const out: string[] = [];
    const types = await this.fieldTypes(className);
    for (const key of keys) {
      const [head, field] = key.split('.');
      const target = field === undefined ? undefined : types[head]?.targetClass;
      const allowed = target ? this.allowSet(target) : undefined;
      if (
        allowed &&
        !allowed.has(field) &&
        !(ALWAYS_KEEP_FIELDS as readonly string[]).includes(field)
      )
        out.push(key);
    }
    return out;
  }

  /**
   * Fields the agent asked for that came back missing because a policy withheld them, with the
   * reason: `protected` (the class's protectedFields, applied by Parse to a non-master user, so
   * only when some row lacks the field) or `not_allowlisted` (a joined class's allowlist). Names
   * only; a withheld value is never read.
   */
  async withheldFields(
    className: string,
    plan: PlannedRead,
    rows: ReadonlyArray<Record<string, unknown>>,
  ): Promise<Record<string, string> | undefined> {
    const out: Record<string, string> = {};
    if (!this.identity.usingMasterKey && rows.length > 0 && plan.askedFields?.length) {
      const clp = (await this.schemas.get(className))?.classLevelPermissions;
      const protectedFields = new Set<string>();
      const lists = isPlainObject(clp?.protectedFields) ? clp.protectedFields : {};
      for (const list of Object.values(lists)) {
        if (Array.isArray(list))
          for (const f of list) if (typeof f === 'string') protectedFields.add(f);
      }
      for (const field of plan.askedFields) {
        if (protectedFields.has(field) && rows.some((row) => !(field in row))) {
          out[field] = 'protected';
        }
      }
    }
    for (const key of plan.notAllowlistedKeys ?? []) out[key] = 'not_allowlisted';
    return Object.keys(out).length ? out : undefined;
  }

  /**
   * Scrubs rows for this agent: denied classes redacted, internal fields and ACLs dropped, and every
   * row of a class with an allowlist (top-level or joined) cut down to that allowlist.
   */
  redactRows<T>(
    rows: T,
    className?: string,
    options: Pick<RedactOptions, 'simplifyTyped'> = {},
  ): T {
    const references = new Map<string, Readonly<Record<string, string>>>();
    return redact(rows, (c) => this.isDenied(c), {
      allowlistFor: (c) => this.allowSet(c),
      rootClass: className,
      simplifyTyped: options.simplifyTyped,
      referenceFieldsOf: (c) => {
        let fields = references.get(c);
        if (!fields) references.set(c, (fields = this.referenceFields(c)));
        return fields;
      },
    }) as T;
  }

  /**
   * The Pointer and Relation columns of a class, field -> target class: the schemas the class gate
   * loaded, completed by `@BelongsTo`. Redaction reads only these columns as references.
   */
  protected referenceFields(className: string): Readonly<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const [name, field] of Object.entries(this.schemaSnapshot?.get(className)?.fields ?? {})) {
      if ((field.type === 'Pointer' || field.type === 'Relation') && field.targetClass) {
        out[name] = field.targetClass;
      }
    }
    for (const [field, target] of Object.entries(this.meta(className)?.references ?? {})) {
      out[field] ??= target;
    }
    return out;
  }
}
