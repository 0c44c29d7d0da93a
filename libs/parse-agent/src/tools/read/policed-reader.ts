import {
  AccessDeniedError,
  AgentValidationError,
  InvalidQueryError,
  ParseAgentConfigError,
  PointerShapeError,
} from '../../core/errors';
import { DataPathUnavailableError } from '../../data/data-router';
import { releaseHandedOverRows } from '../../data/handed-over-rows';
import type {
  AggregateOptions,
  DataOperation,
  DataPath,
  DataPrincipals,
  DataRow,
  DistinctSpec,
  ExplainSummary,
  GroupByDateSpec,
  GroupBySpec,
  SearchSpec,
  VectorSearchResult,
  VectorSearchSpec,
} from '../../ports/data-path';
import { validateWhere, type Where } from '../../query/constraint-translator';
import { isPlainObject } from '../../core/plain-object';
import { classesNamed } from '../../query/pipeline-classes';
import { andWhere } from '../../query/where-composer';
import type { RedactOptions } from '../../security/redactor';
import type { PipelineLimits } from '../../security/pipeline/pipeline-policy';
import type { PlannedRead, ReadPolicy, ReadRequest } from '../../security/read-policy';
import { rowInTenant } from '../../security/tenant-scope';
import type { AnalyticsSettings } from '../tool-context';
import { maxTimeMsFor, refuseCollectionScan, validatePipelineFor } from './analytics-policy';
import {
  includeTree,
  joinKey,
  keysBelow,
  keysForPath,
  pointersIn,
  slices,
  withJoined,
} from './include-joins';

/** Most objectIds one joined read names (one `$in`); more are read in several. */
const JOIN_IDS_PER_READ = 500;

/** What a reader is built from: the agent's policy and where its identity-bound paths come from. */
export interface ReadSources {
  access: ReadPolicy;
  /** The path the router picks for an operation, bound to the agent's identity. */
  pathFor(operation: DataOperation): DataPath;
  signal: AbortSignal;
  timeoutMs: number;
  analytics: AnalyticsSettings;
}

/** How returned rows are shown: display simplification of typed values, applied with redaction. */
export type DisplayOptions = Pick<RedactOptions, 'simplifyTyped'>;

/** A list read: the caller's where, keys, include and order, and the page. */
export interface FindRequest extends Omit<ReadRequest, 'order' | 'injectTenant'> {
  /** The caller's order ("-a,b"), checked against the policy. */
  order?: unknown;
  /** Newest first (-createdAt), the reader's own order: createdAt is readable under any allowlist. */
  newestFirst?: boolean;
  limit: number;
  skip?: number;
}

/** A full-text search: the caller's where, keys and fields, planned like a read. */
export interface SearchRequest
  extends
    Pick<ReadRequest, 'where' | 'keys' | 'applyCanonicalFilter'>,
    Omit<SearchSpec, 'where' | 'keys'> {}

/** Redacted rows best first with their scores, the facet counts, and the plan. */
export interface PolicedSearch {
  rows: Array<{ row: DataRow; score: number | null }>;
  facets?: Record<string, Array<{ value: unknown; count: number }>>;
  plan: PlannedRead;
}

/** A vector search: the caller's where and keys, planned like a read. */
export interface VectorSearchRequest
  extends Pick<ReadRequest, 'where' | 'keys'>, Omit<VectorSearchSpec, 'where' | 'keys'> {}

/** Ranked chunks with their redacted parent rows (documents best first), and the plan. */
export interface PolicedVectorSearch extends VectorSearchResult {
  plan: PlannedRead;
}

/** A read by objectId: include and the canonical-filter opt-out. */
export type GetRequest = Pick<ReadRequest, 'include' | 'applyCanonicalFilter'>;

/**
 * Per include path ("customer", "order.customer"), how many distinct pointed-to objects were not
 * joined because a direct read of their class by this agent does not return them. Those stay bare
 * pointers; their fields are never read into the result.
 */
export type WithheldIncludes = Record<string, number>;

/** Redacted rows with the plan that fetched them. */
export interface PolicedRows {
  rows: DataRow[];
  plan: PlannedRead;
  /** Joined objects left as bare pointers, per include path; absent when none were. */
  withheldIncludes?: WithheldIncludes;
}

/** A page of redacted rows; `count()` counts every row the same planned where matches. */
export interface PolicedPage extends PolicedRows {
  count(): Promise<number>;
}

/**
 * An analytics call a path may answer with its own method instead of the pipeline. The where is
 * the caller's and is planned by the reader; the operation's path decides whether it can.
 */
export type NativeAnalytics =
  | { groupBy: Omit<GroupBySpec, 'where'> }
  | { groupByDate: Omit<GroupByDateSpec, 'where'> }
  | {
      distinct: Omit<DistinctSpec, 'where'>;
      sort?: 'asc' | 'desc';
      /** Run the pipeline instead when the path can (array flattening is the pipeline's). */
      pipelineWhenPossible?: boolean;
      /** Only the pipeline answers this call: the refusal when the path cannot run one. */
      pipelineOnly?: string;
    };

/** How a prepared pipeline runs (with the canonical-filter choice given to `prepare`). */
export interface PipelineRun {
  /** The caller's own filter: what the COLLSCAN pre-flight explains and a native call plans. */
  where?: Record<string, unknown>;
  native?: NativeAnalytics;
  display?: DisplayOptions;
}

/** A pipeline the policy accepted: shown as is by a dry run, or run for redacted rows. */
export interface PreparedPipeline {
  /** The scoped pipeline that runs (scopes, projections, auto-limit added). */
  readonly pipeline: Record<string, unknown>[];
  readonly autoLimited: boolean;
  readonly autoLimit: number;
  /** Per class the pipeline reads, the fields Parse's protectedFields hide from this agent. */
  readonly withheld: ReadonlyMap<string, readonly string[]>;
  /** The root class's column a top-level output field holds unchanged, when the pipeline shows it. */
  columnOrigin(outputField: string): string | undefined;
  run(options?: PipelineRun): Promise<DataRow[]>;
}

export interface PrepareOptions {
  limits?: Partial<PipelineLimits>;
  applyCanonicalFilter?: boolean;
}

/**
 * Every read a tool makes, each through the agent's read policy in one fixed order: the class
 * gate, the plan (where composed with canonical filter, agent filters and tenant; keys, include
 * and order checked; pipelines validated and scoped), the read on the path the router picks, and
 * redaction of what comes back. Read tools get this instead of a data path, so none can read
 * unplanned or return unredacted rows. Which optional `DataPath` methods a path has is tested
 * here too, with an error naming what to configure.
 */
export class PolicedReader {
  // Private (not protected): what a tool holds must not lead back to a raw path.
  readonly #sources: ReadSources;
  readonly #paths = new Map<DataOperation, DataPath>();
  readonly #gated = new Set<string>();

  constructor(sources: ReadSources) {
    this.#sources = sources;
  }

  /** The agent's read policy (class gate, allowlists, tenant, filters, redaction). */
  get access(): ReadPolicy {
    return this.#sources.access;
  }

  /**
   * The class gate: hidden, filtered-out and missing classes are refused alike. Every read below
   * runs it; a tool calls it first only to keep the gate's answer ahead of its own argument errors.
   */
  async gate(className: string): Promise<void> {
    if (this.#gated.has(className)) return;
    await this.access.requireReadableClass(className);
    this.#gated.add(className);
  }

  /** Rows of a class: gate, plan, find, redact. */
  async find(
    className: string,
    request: FindRequest,
    display?: DisplayOptions,
  ): Promise<PolicedPage> {
    await this.gate(className);
    const { order, newestFirst, limit, skip, ...read } = request;
    const checkedOrder = newestFirst ? '-createdAt' : this.access.checkOrder(className, order);
    const plan = await this.access.planRead(className, read);
    await this.#preflight(className, read.where, plan.where);
    const raw = await this.#path('find').find(
      className,
      {
        where: plan.where,
        keys: await this.#pathKeys(className, plan.keys, plan.include),
        order: checkedOrder,
        limit,
        skip,
      },
      this.#sources.signal,
    );
    const joined = await this.#join(raw, plan, read.applyCanonicalFilter !== false);
    const rows = this.access.redactRows(joined.rows, className, display);
    // Redaction copied what may be shown; the raw rows go now (see handed-over-rows.ts).
    releaseHandedOverRows(raw);
    return {
      rows,
      plan,
      ...withheldOf(joined),
      count: () => this.#path('count').count(className, plan.where, this.#sources.signal),
    };
  }

  /** The exact number of rows the caller's where matches under the policy. */
  async count(
    className: string,
    request: Pick<ReadRequest, 'where' | 'applyCanonicalFilter'>,
  ): Promise<number> {
    await this.gate(className);
    const { where } = await this.access.planWhere(
      className,
      request.where,
      request.applyCanonicalFilter !== false,
    );
    await this.#preflight(className, request.where, where);
    return this.#path('count').count(className, where, this.#sources.signal);
  }

  /**
   * One object by objectId, redacted; undefined when it does not exist or the agent's filters hide
   * it (the two look the same). A row outside the agent's tenant is refused.
   */
  async get(
    className: string,
    objectId: string,
    request: GetRequest = {},
  ): Promise<{ row?: DataRow; plan: PlannedRead; withheldIncludes?: WithheldIncludes }> {
    await this.gate(className);
    const plan = await this.access.planRead(className, { ...request, injectTenant: false });
    const path = this.#path('get');
    const keys = await this.#pathKeys(className, plan.keys, plan.include);
    let row: DataRow | undefined;
    if (Object.keys(plan.where).length) {
      // Filters apply: fetch by id through the filtered query, so a filtered-out row looks missing.
      const rows = await path.find(
        className,
        { where: andWhere(plan.where, { objectId }), keys, limit: 1 },
        this.#sources.signal,
      );
      row = rows[0];
    } else {
      row = await path.get(className, objectId, { keys }, this.#sources.signal);
    }
    if (!row) return { plan };
    if (plan.tenant && !rowInTenant(row, plan.tenant)) throw tenantMismatch(className);
    const joined = await this.#join([row], plan, request.applyCanonicalFilter !== false);
    return {
      row: this.access.redactRows(joined.rows[0], className),
      plan,
      ...withheldOf(joined),
    };
  }

  /**
   * Whether a read by this agent finds the object, with the same plan as a read of its class
   * (class gate, tenant scope, the agent's filters, the canonical filter): the row check in front
   * of every update and delete. A row of another tenant, filtered out or missing all answer false.
   */
  async reaches(className: string, objectId: string): Promise<boolean> {
    await this.gate(className);
    const { where, tenant } = await this.access.planWhere(className, {}, true, true);
    const rows = await this.#path('find').find(
      className,
      { where: andWhere(where, { objectId }), keys: ['objectId'], limit: 1 },
      this.#sources.signal,
    );
    const row = rows[0];
    return !!row && !(tenant && tenant.field in row && !rowInTenant(row, tenant));
  }

  /** Objects by objectId (distinct, validated ids), redacted; any row outside the tenant is refused. */
  async getMany(
    className: string,
    objectIds: readonly string[],
    request: GetRequest = {},
  ): Promise<PolicedRows> {
    await this.gate(className);
    const plan = await this.access.planRead(className, { ...request, injectTenant: false });
    const raw = await this.#path('find').find(
      className,
      {
        where: andWhere({ objectId: { $in: objectIds } }, plan.where),
        keys: await this.#pathKeys(className, plan.keys, plan.include),
        limit: objectIds.length,
      },
      this.#sources.signal,
    );
    if (plan.tenant && raw.some((row) => !rowInTenant(row, plan.tenant!)))
      throw tenantMismatch(className);
    const joined = await this.#join(raw, plan, request.applyCanonicalFilter !== false);
    const rows = this.access.redactRows(joined.rows, className);
    releaseHandedOverRows(raw);
    return { rows, plan, ...withheldOf(joined) };
  }

  /** The keys a path reads rows of `className` with (see `keysForPath`). */
  async #pathKeys(
    className: string,
    keys: readonly string[] | undefined,
    include: readonly string[] | undefined,
  ): Promise<string[] | undefined> {
    if (!keys?.some((k) => k.includes('.'))) return keys ? [...keys] : undefined;
    const types = await this.access.fieldTypes(className);
    const objects = new Set(Object.keys(types).filter((f) => types[f].type === 'Object'));
    return keysForPath(keys, objects, new Set(includeTree(include ?? []).keys()));
  }

  /**
   * Expands the plan's includes. Each joined class is read here as a direct read of that class by
   * this agent would read it (class gate, its tenant scope, canonical filter and the agent's
   * filters for it, on the same identity-bound path, so row ACL, CLP and protectedFields too),
   * restricted to the pointed-to ids; nested includes are joined the same way, level by level.
   * A pointer whose object that read does not return stays a bare pointer and is counted per
   * include path. Redaction then cuts joined rows to their class's allowlist, as it does for rows
   * read directly. The holder rows are copied where a pointer is replaced, never changed.
   */
  async #join(
    rows: DataRow[],
    plan: PlannedRead,
    applyCanonicalFilter: boolean,
  ): Promise<{ rows: DataRow[]; withheld: WithheldIncludes }> {
    const withheld: WithheldIncludes = {};
    if (!plan.include?.length || !rows.length) return { rows, withheld };
    const joined = await this.#joinLevel(rows, plan.include, plan.keys, {
      canonical: applyCanonicalFilter,
      prefix: '',
      withheld,
    });
    return { rows: joined, withheld };
  }

  async #joinLevel(
    rows: DataRow[],
    include: readonly string[],
    keys: readonly string[] | undefined,
    join: { canonical: boolean; prefix: string; withheld: WithheldIncludes },
  ): Promise<DataRow[]> {
    let current = rows;
    for (const [head, below] of includeTree(include)) {
      const wanted = new Map<string, Set<string>>();
      for (const row of current) {
        for (const ptr of pointersIn(row[head])) {
          let ids = wanted.get(ptr.className);
          if (!ids) wanted.set(ptr.className, (ids = new Set()));
          ids.add(ptr.objectId);
        }
      }
      if (!wanted.size) continue;
      const path = `${join.prefix}${head}`;
      const found = new Map<string, DataRow>();
      let missing = 0;
      for (const [target, ids] of wanted) {
        // A class the agent may not see: redaction shows its pointers as redacted, unread.
        if (this.access.isDenied(target)) continue;
        const rowsOfTarget = await this.#joinedRows(target, [...ids], keysBelow(keys, head), {
          ...join,
          include: below,
          prefix: `${path}.`,
        });
        for (const id of ids) {
          const row = rowsOfTarget.get(id);
          if (row) found.set(joinKey(target, id), row);
          else missing += 1;
        }
      }
      if (missing) join.withheld[path] = (join.withheld[path] ?? 0) + missing;
      if (!found.size) continue;
      current = current.map((row) =>
        pointersIn(row[head]).length ? { ...row, [head]: withJoined(row[head], found) } : row,
      );
    }
    return current;
  }

  /**
   * The rows of `target` with these ids that a direct read by this agent returns, by objectId,
   * shaped as joined objects. A class the policy refuses to this agent (missing, or needing a
   * tenant binding it lacks) joins nothing; a data path's own refusal fails the read, as it would
   * for a direct read.
   */
  async #joinedRows(
    target: string,
    ids: string[],
    requestedKeys: string[] | undefined,
    join: { canonical: boolean; include: string[]; prefix: string; withheld: WithheldIncludes },
  ): Promise<Map<string, DataRow>> {
    const out = new Map<string, DataRow>();
    let where: Record<string, unknown>;
    try {
      await this.gate(target);
      ({ where } = await this.access.planWhere(target, {}, join.canonical, true));
    } catch (error) {
      if (error instanceof AccessDeniedError) return out;
      throw error;
    }
    const keys = this.access.joinedKeys(target, requestedKeys);
    const readKeys = await this.#pathKeys(target, keys, join.include);
    const asked = new Set(ids);
    let rows: DataRow[] = [];
    for (const slice of slices(ids, JOIN_IDS_PER_READ)) {
      const found = await this.#path('find').find(
        target,
        {
          where: andWhere(where, { objectId: { $in: slice } }),
          keys: readKeys,
          limit: slice.length,
        },
        this.#sources.signal,
      );
      // Only the ids asked for: a path that over-answers adds nothing.
      for (const row of found) {
        const id = row.objectId;
        if (typeof id === 'string' && asked.has(id)) {
          asked.delete(id);
          rows.push(row);
        }
      }
    }
    if (join.include.length) rows = await this.#joinLevel(rows, join.include, keys, join);
    for (const row of rows) {
      out.set(row.objectId as string, { ...row, __type: 'Object', className: target });
    }
    return out;
  }

  /**
   * Full-text search (Atlas Search): gate, the searched, returned and counted fields checked like
   * keys, the where planned (canonical filter, agent filters, tenant), then the path's search with
   * the identity's ACL, and redaction of the rows.
   */
  async search(className: string, request: SearchRequest): Promise<PolicedSearch> {
    await this.gate(className);
    const { where, keys, applyCanonicalFilter, ...spec } = request;
    this.access.checkFields(className, spec.paths ?? [], 'fields');
    this.access.checkFields(className, spec.facets?.fields ?? [], 'facets');
    const plan = await this.access.planRead(className, { where, keys, applyCanonicalFilter });
    const path = this.#path('search');
    if (!path.search) {
      throw new DataPathUnavailableError(
        `The '${path.kind}' data path cannot run full-text search. It needs the direct MongoDB path on an Atlas cluster with a search index (mongo in ParseAgentModule.forRoot).`,
      );
    }
    const found = await path.search(
      className,
      { ...spec, where: plan.where, keys: plan.keys },
      this.#options(),
    );
    const rows = this.access.redactRows(
      found.rows.map((r) => r.row),
      className,
    );
    let facets: PolicedSearch['facets'];
    if (found.facets) {
      // Facet values are redacted like group keys (a pointer into a hidden class, internal names).
      facets = {};
      for (const [field, buckets] of Object.entries(found.facets)) {
        facets[field] = this.access.redactRows(
          buckets as unknown as DataRow[],
          undefined,
        ) as Array<{
          value: unknown;
          count: number;
        }>;
      }
    }
    return {
      rows: rows.map((row, i) => ({ row, score: found.rows[i]?.score ?? null })),
      ...(facets ? { facets } : {}),
      plan,
    };
  }

  /**
   * Nearest chunks of an `@AgentSearchable` class: the class gate, the text field checked against
   * the allowlist, the read planned (caller where, canonical filter, filters, tenant), the search
   * on the path (which applies that where with the identity's row ACL and CLP before ranking), the
   * tenant re-asserted on every parent row, and redaction of the rows.
   */
  async vectorSearch(
    className: string,
    request: VectorSearchRequest,
  ): Promise<PolicedVectorSearch> {
    await this.gate(className);
    const { where, keys, ...spec } = request;
    this.access.checkFields(className, [spec.field], 'text_field');
    const plan = await this.access.planRead(className, { where, keys });
    const path = this.#path('vector_search');
    if (!path.vectorSearch) {
      throw new DataPathUnavailableError(
        `The '${path.kind}' data path cannot run semantic_search. Configure the direct PostgreSQL path (postgres in ParseAgentModule.forRoot).`,
      );
    }
    // The tenant column is read even when the allowlist leaves it out, so every row is checked.
    const pathKeys = plan.keys && plan.tenant ? [...plan.keys, plan.tenant.field] : plan.keys;
    const found = await path.vectorSearch(
      className,
      { ...spec, where: plan.where, keys: pathKeys },
      this.#options(),
    );
    if (plan.tenant && found.rows.some((row) => !rowInTenant(row, plan.tenant!))) {
      throw tenantMismatch(className);
    }
    return { ...found, rows: this.access.redactRows(found.rows, className), plan };
  }

  /** How the database would run the caller's query, planned like a read (no rows). */
  async explain(
    className: string,
    request: { where?: Record<string, unknown>; order?: unknown },
  ): Promise<ExplainSummary> {
    await this.gate(className);
    const order = this.access.checkOrder(className, request.order);
    const { where } = await this.access.planWhere(className, request.where);
    const path = this.#path('explain');
    if (!path.explain) {
      throw new DataPathUnavailableError(
        `The '${path.kind}' data path cannot explain queries. Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot).`,
      );
    }
    return path.explain(className, { where, order }, this.#options());
  }

  /** Refuses a full scan when the operator asked to (`refuseCollscan`); see explain_query. */
  refuseCollectionScan(className: string, summary: ExplainSummary): void {
    refuseCollectionScan(this.#sources.analytics, this.access, className, summary);
  }

  /**
   * Checks a caller-level pipeline for an analytics operation: the class gate, the fields Parse's
   * protectedFields withhold (as the operation's path reports them), and the pipeline policy. A
   * dry run stops here; `run()` reads and redacts.
   */
  async prepare(
    operation: DataOperation,
    className: string,
    pipeline: unknown,
    options: PrepareOptions = {},
  ): Promise<PreparedPipeline> {
    await this.gate(className);
    const applyCanonical = options.applyCanonicalFilter !== false;
    const withheld = await this.#withheld(operation, className, pipeline);
    const validated = await validatePipelineFor(
      this.access,
      className,
      pipeline,
      options.limits ?? {},
      withheld,
      applyCanonical,
      this.#aggregatesStoredDocuments(operation),
    );
    return {
      pipeline: validated.pipeline,
      autoLimited: validated.autoLimited,
      autoLimit: validated.autoLimit,
      withheld,
      columnOrigin: (field) => validated.columnOrigin(field),
      run: async (run = {}) => {
        const rows = await this.#runAnalytics(
          operation,
          className,
          validated.pipeline,
          run,
          applyCanonical,
        );
        if (!Array.isArray(rows)) throw new AgentValidationError('The data path returned no rows.');
        return this.access.redactRows(rows, undefined, run.display);
      },
    };
  }

  /**
   * A path's own analytics method when it has one for the request, else the pipeline. Either way
   * the caller's filter is planned first (canonical filter as asked, agent filters, tenant) and
   * pre-flighted when the operator refuses full scans.
   */
  async #runAnalytics(
    operation: DataOperation,
    className: string,
    pipeline: Record<string, unknown>[],
    run: PipelineRun,
    applyCanonical: boolean,
  ): Promise<DataRow[]> {
    const path = this.#path(operation);
    const native = run.native;
    const planned = async () => {
      const { where } = await this.access.planWhere(className, run.where, applyCanonical);
      await this.#preflight(className, run.where, where);
      return where;
    };
    if (native && 'groupBy' in native && path.groupBy) {
      const where = await planned();
      const groups = await path.groupBy(className, { ...native.groupBy, where }, this.#options());
      return groups.map((g) => ({ _id: g.key, value: g.value }));
    }
    if (native && 'groupByDate' in native && path.groupByDate) {
      const where = await planned();
      const spec = { ...native.groupByDate, where };
      const groups = await path.groupByDate(className, spec, this.#options());
      return groups.map((g) => ({ _id: g.key, value: g.value }));
    }
    if (native && 'distinct' in native && native.pipelineOnly && !path.aggregate) {
      throw new AgentValidationError(native.pipelineOnly);
    }
    if (
      native &&
      'distinct' in native &&
      path.distinct &&
      !(native.pipelineWhenPossible && path.aggregate)
    ) {
      const where = await planned();
      let values = await path.distinct(className, { ...native.distinct, where }, this.#options());
      if (native.sort) {
        values = [...values].sort(compareValues);
        if (native.sort === 'desc') values.reverse();
      }
      return values.map((v) => ({ _id: v }));
    }
    if (!path.aggregate) {
      throw new DataPathUnavailableError(
        `The '${path.kind}' data path chosen for '${operation}' cannot run aggregation pipelines for this agent. Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot).`,
      );
    }
    await this.#preflightMatch(className, run.where, applyCanonical);
    return path.aggregate(className, pipeline, this.#options());
  }

  /**
   * With `refuseCollscan` on, explains a call that filters (the caller passed a non-empty where)
   * before it runs, with the where it runs with (canonical filter, agent filters and tenant
   * included, so a scope on an indexed field helps), and refuses a full scan of the class. Not
   * pre-flighted: a call without a filter (it reads the class as a whole by design), a class
   * marked @AgentAllowCollscan, and a deployment where no path can explain for this agent (Parse
   * REST alone: the guard needs a direct database path).
   */
  async #preflight(className: string, callerWhere: unknown, planned: Where): Promise<void> {
    if (!this.#sources.analytics.refuseCollscan) return;
    if (!isPlainObject(callerWhere) || !Object.keys(callerWhere).length) return;
    if (this.access.meta(className)?.allowCollscan) return;
    const path = this.#explainPath();
    if (!path?.explain) return;
    const summary = await path.explain(className, { where: planned }, this.#options());
    this.refuseCollectionScan(className, summary);
  }

  /**
   * The pre-flight of a pipeline: its leading `$match`, planned like a where. Constraints the query
   * language cannot express (an `$expr`, say) are left out of the explained filter; the rest is
   * explained as the database would start the pipeline.
   */
  async #preflightMatch(
    className: string,
    match: Record<string, unknown> | undefined,
    applyCanonical: boolean,
  ): Promise<void> {
    if (!this.#sources.analytics.refuseCollscan || !match) return;
    const plain: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(match)) {
      try {
        validateWhere({ [key]: value });
        plain[key] = value;
      } catch {
        // Pipeline-only syntax: the pipeline validator accepted it, the explain cannot take it.
      }
    }
    if (!Object.keys(plain).length) return;
    let where: Where;
    try {
      ({ where } = await this.access.planWhere(className, plain, applyCanonical));
    } catch (error) {
      // A value written in pipeline form ({ "$date": ... }) that the where language reads otherwise:
      // the pipeline validator accepted the stage, so only the explain is skipped.
      if (
        error instanceof InvalidQueryError ||
        error instanceof AgentValidationError ||
        error instanceof PointerShapeError
      )
        return;
      throw error;
    }
    await this.#preflight(className, plain, where);
  }

  /** The path that explains for this agent, or undefined when none can. */
  #explainPath(): DataPath | undefined {
    try {
      return this.#path('explain');
    } catch (error) {
      if (error instanceof DataPathUnavailableError) return undefined;
      throw error;
    }
  }

  /**
   * Per class the pipeline reads (the root and every $lookup/$unionWith class), the fields Parse's
   * protectedFields hide from this agent, as the path the operation runs on reports them. Empty
   * when no path serves the operation (a dry run still validates) or the path cannot tell.
   */
  async #withheld(
    operation: DataOperation,
    className: string,
    pipeline: unknown,
  ): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    let path: DataPath;
    try {
      path = this.#path(operation);
    } catch (error) {
      if (error instanceof DataPathUnavailableError) return out;
      throw error;
    }
    if (!path.protectedFields) return out;
    for (const name of new Set([className, ...classesNamed(pipeline)])) {
      // Only classes this agent may read: a hidden class is refused by the validator, unasked.
      if (typeof name !== 'string' || this.access.isDenied(name)) continue;
      const hidden = await path.protectedFields(name, this.#sources.signal);
      if (hidden.length) out.set(name, hidden);
    }
    return out;
  }

  /**
   * Whether the path the operation runs on aggregates documents as stored (internal columns
   * included); then every class the pipeline reads is projected to its visible fields first.
   * False when no path serves the operation (a dry run still validates).
   */
  #aggregatesStoredDocuments(operation: DataOperation): boolean {
    try {
      return this.#path(operation).aggregatesStoredDocuments === true;
    } catch (error) {
      if (error instanceof DataPathUnavailableError) return false;
      throw error;
    }
  }

  /** The tool's signal and the pushed-down limit, for every analytics call. */
  /**
   * Who the agent is for row ACLs, from its identity-bound row read path (see agentPrincipals):
   * for a custom tool that queries a database of its own. Throws when the path cannot tell.
   */
  async principals(signal: AbortSignal = this.#sources.signal): Promise<DataPrincipals> {
    const path = this.#path('find');
    if (typeof path.principals !== 'function') {
      throw new ParseAgentConfigError(
        `The '${path.kind}' data path cannot say who the agent is (it has no principals()); ACL helpers need one of the library's paths or a path that implements principals().`,
      );
    }
    return path.principals(signal);
  }

  /** Forgets the principals cached for the agent's identity (see refreshAgentPrincipals). */
  async refreshPrincipals(signal: AbortSignal = this.#sources.signal): Promise<void> {
    await this.#path('find').refreshPrincipals?.(signal);
  }

  #options(): AggregateOptions {
    return { signal: this.#sources.signal, maxTimeMS: maxTimeMsFor(this.#sources) };
  }

  /** The identity-bound path for an operation, chosen once per call. */
  #path(operation: DataOperation): DataPath {
    let path = this.#paths.get(operation);
    if (!path) {
      path = this.#sources.pathFor(operation);
      this.#paths.set(operation, path);
    }
    return path;
  }
}

function withheldOf(joined: { withheld: WithheldIncludes }): {
  withheldIncludes?: WithheldIncludes;
} {
  return Object.keys(joined.withheld).length ? { withheldIncludes: joined.withheld } : {};
}

/** A row by id outside the agent's tenant. */
export function tenantMismatch(className: string): AccessDeniedError {
  return new AccessDeniedError(
    `Object does not belong to the agent's tenant scope for class '${className}'`,
    { kind: 'tenant_scope' },
  );
}

/** Values in a stable order for distinct's `sort`: numbers, then strings, then the rest as JSON. */
function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = typeof a === 'string' ? a : JSON.stringify(a);
  const sb = typeof b === 'string' ? b : JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
