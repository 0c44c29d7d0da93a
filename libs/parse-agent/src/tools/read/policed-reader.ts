import { AccessDeniedError, AgentValidationError, ParseAgentConfigError } from '../../core/errors';
import { DataPathUnavailableError } from '../../data/data-router';
import { releaseHandedOverRows } from '../../data/handed-over-rows';
import type {
  AggregateOptions,
  DataOperation,
  DataPath,
  DataPrincipals,
  DataRow,
  ExplainSummary,
  SearchSpec,
  VectorSearchResult,
  VectorSearchSpec,
} from '../../ports/data-path';
import { andWhere } from '../../query/where-composer';
import type { PipelineLimits } from '../../security/pipeline/pipeline-policy';
import type { PlannedRead, ReadPolicy, ReadRequest } from '../../security/read-policy';
import { rowInTenant } from '../../security/tenant-scope';
import type { AnalyticsSettings } from '../tool-context';
import { maxTimeMsFor, refuseCollectionScan, validatePipelineFor } from './analytics-policy';
import { boundedVectorSearch } from './bounded-vector-search';
import { includeTree, keysForPath } from './include-joins';
import {
  aggregatesStoredDocuments,
  preflight,
  protectedFieldsRead,
  runAnalytics,
} from './policed-analytics';
import { joinIncludes } from './policed-joins';
import type { DisplayOptions, PipelineRun, ReaderCore, WithheldIncludes } from './reader-core';

export type { DisplayOptions, NativeAnalytics, PipelineRun, WithheldIncludes } from './reader-core';

/** What a reader is built from: the agent's policy and where its identity-bound paths come from. */
export interface ReadSources {
  access: ReadPolicy;
  /** The path the router picks for an operation, bound to the agent's identity. */
  pathFor(operation: DataOperation): DataPath;
  signal: AbortSignal;
  timeoutMs: number;
  analytics: AnalyticsSettings;
}

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
  readonly #core: ReaderCore;

  constructor(sources: ReadSources) {
    this.#sources = sources;
    this.#core = {
      access: sources.access,
      signal: sources.signal,
      analytics: sources.analytics,
      gate: (className) => this.gate(className),
      path: (operation) => this.#path(operation),
      pathKeys: (className, keys, include) => this.#pathKeys(className, keys, include),
      options: () => this.#options(),
    };
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
    await preflight(this.#core, className, read.where, plan.where);
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
    const joined = await joinIncludes(this.#core, raw, plan, read.applyCanonicalFilter !== false);
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
    await preflight(this.#core, className, request.where, where);
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
    const joined = await joinIncludes(
      this.#core,
      [row],
      plan,
      request.applyCanonicalFilter !== false,
    );
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
    const joined = await joinIncludes(
      this.#core,
      raw,
      plan,
      request.applyCanonicalFilter !== false,
    );
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
    /** Parse REST only: embeds candidate chunks on the fly (see bounded-vector-search.ts). */
    embedCandidates?: (texts: string[]) => Promise<number[][]>,
  ): Promise<PolicedVectorSearch> {
    await this.gate(className);
    const { where, keys, ...spec } = request;
    this.access.checkFields(className, [spec.field], 'text_field');
    const plan = await this.access.planRead(className, { where, keys });
    const path = this.#path('vector_search');
    if (!path.vectorSearch) {
      const chunking = this.access.meta(className)?.searchable?.chunk;
      if (embedCandidates && chunking && path.kind === 'parse-rest') {
        // No stored vectors to read: a bounded exact scan over rows read like any find.
        const found = await boundedVectorSearch(this, className, {
          ...request,
          chunking,
          embedCandidates,
        });
        return { ...found, plan: found.plan ?? plan };
      }
      throw new DataPathUnavailableError(
        `The '${path.kind}' data path cannot run semantic_search. Configure the direct PostgreSQL path (postgres in ParseAgentModule.forRoot).`,
      );
    }
    // The tenant column is read even when the allowlist leaves it out, so every row is checked.
    const pathKeys = plan.keys && plan.tenant ? [...plan.keys, plan.tenant.field] : plan.keys;
    const prefilter = {
      tenantField: plan.tenant?.field,
      filterFields: this.access.meta(className)?.searchable?.filterFields ?? [],
    };
    const found = await path.vectorSearch(
      className,
      { ...spec, where: plan.where, keys: pathKeys, prefilter },
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

  /**
   * The plan of a pipeline as `aggregate` would run it (validated and scoped as there), without
   * running it. Only a path that compiles pipelines itself (PostgreSQL) can show one.
   */
  async explainPipeline(
    className: string,
    pipeline: unknown,
    options: PrepareOptions = {},
  ): Promise<ExplainSummary & { stages: number }> {
    const prepared = await this.prepare('aggregate', className, pipeline, options);
    const path = this.#path('explain');
    if (!path.explainPipeline) {
      throw new DataPathUnavailableError(
        `The '${path.kind}' data path cannot explain pipelines; explain_query takes 'where' and 'order' here. A pipeline plan needs the direct PostgreSQL path (postgres in ParseAgentModule.forRoot).`,
      );
    }
    const summary = await path.explainPipeline(className, prepared.pipeline, this.#options());
    return { ...summary, stages: prepared.pipeline.length };
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
    const withheld = await protectedFieldsRead(this.#core, operation, className, pipeline);
    const validated = await validatePipelineFor(
      this.access,
      className,
      pipeline,
      options.limits ?? {},
      withheld,
      applyCanonical,
      aggregatesStoredDocuments(this.#core, operation),
    );
    return {
      pipeline: validated.pipeline,
      autoLimited: validated.autoLimited,
      autoLimit: validated.autoLimit,
      withheld,
      columnOrigin: (field) => validated.columnOrigin(field),
      run: async (run = {}) => {
        const rows = await runAnalytics(
          this.#core,
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

  /** The tool's signal and the pushed-down limit, for every analytics call. */
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
