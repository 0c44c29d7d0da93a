import type { AgentIdentity } from '../../core/agent-identity';
import { AccessDeniedError, AgentValidationError } from '../../core/errors';
import {
  type AggregateOptions,
  type DataFindQuery,
  type DataOperation,
  type DataPath,
  type DataPrincipals,
  type DataRow,
  type DistinctSpec,
  type ExplainSummary,
  type GroupByDateSpec,
  type GroupBySpec,
  type GroupRow,
  type VectorSearchResult,
  type VectorSearchSpec,
} from '../../ports/data-path';
import { vectorSearchOn } from './pg-vector-search';
import { isInternalField } from '../../query/internal-fields';
import {
  aclGroup,
  checkClassPermission,
  clpOperationFor,
  protectedFieldsFor,
  type ClpOperation,
  type PgReader,
} from './class-level-permissions';
import { countSql } from './count-sql';
import { distinctSql } from './distinct-sql';
import { groupByDateSql, type DateInterval } from './group-by-date-sql';
import { handOverRows } from '../handed-over-rows';
import { groupBySql, type GroupOrder } from './group-by-sql';
import type { PgCatalogSnapshot } from './pg-catalog';
import { explainQuery, summarizePlan, tableSizeQuery, type TableSize } from './pg-explain';
import { readOnly, type RunQuery } from './pg-read-transaction';
import { apiRow } from './pg-row-shape';
import { isColumnField } from './pg-schema';
import { compilePipeline } from './pipeline-to-sql';
import type { PostgresDataAccess } from './postgres-data-access';
import type { SqlContext } from './scoped-source';
import { selectSql, type SelectInput } from './select-sql';
import type { SqlQuery } from './sql-params';
import type { Where } from './where-to-sql';

/** System classes a non-master reader may query (Parse serves the others only to the master key). */
const USER_READABLE_SYSTEM_CLASSES = new Set(['_User', '_Role']);

/** Parse's default page size when a find names no limit. */
const DEFAULT_FIND_LIMIT = 100;

interface ReadScope {
  ctx: SqlContext;
  snapshot: PgCatalogSnapshot;
  reader: PgReader;
}

/**
 * The direct PostgreSQL path bound to one identity. Here the library is the enforcement: every
 * class read is filtered by row ACL (`_rperm`), CLP (operation check first, then pointer
 * permissions) and protectedFields (those columns are never selected), exactly as Parse Server
 * applies them. Rows come back in Parse REST's shape; every query runs read-only with a
 * statement timeout and is cancelled on the database when the call aborts.
 */
export class PostgresDataPath implements DataPath {
  readonly kind = 'postgres';

  constructor(
    protected readonly access: PostgresDataAccess,
    protected readonly identity: AgentIdentity,
  ) {}

  async find(className: string, query: DataFindQuery, signal?: AbortSignal): Promise<DataRow[]> {
    const limit = query.limit ?? DEFAULT_FIND_LIMIT;
    if (limit === 0) return [];
    return this.read('find', className, { signal }, async (scope, run) => {
      const select = { where: query.where, order: query.order, limit, offset: query.skip ?? 0 };
      return handOverRows(await this.readObjects(className, query, select, scope, run));
    });
  }

  async get(
    className: string,
    objectId: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    signal?: AbortSignal,
  ): Promise<DataRow | undefined> {
    if (typeof objectId !== 'string' || !objectId) return undefined;
    return this.read('get', className, { signal }, async (scope, run) => {
      const select = { where: { objectId }, limit: 1 };
      const [row] = await this.readObjects(className, query, select, scope, run);
      return row;
    });
  }

  async count(
    className: string,
    where: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<number> {
    const [row] = await this.readRows('count', className, { signal }, (ctx) =>
      countSql({ className, where }, ctx),
    );
    return Number(row?.count ?? 0);
  }

  async aggregate(
    className: string,
    pipeline: Record<string, unknown>[],
    options: AggregateOptions = {},
  ): Promise<DataRow[]> {
    return this.read('aggregate', className, options, async (scope, run) => {
      const compiled = compilePipeline(className, pipeline, scope.ctx);
      const rows = await run(compiled);
      return rows.map((r) => apiRow(r, compiled.fields, { keepNulls: true }));
    });
  }

  async groupBy(
    className: string,
    spec: GroupBySpec,
    options: AggregateOptions = {},
  ): Promise<GroupRow[]> {
    const rows = await this.readRows('group_by', className, options, (ctx) =>
      groupBySql(
        {
          className,
          field: spec.field,
          accumulator: spec.operation,
          valueField: spec.valueField,
          where: spec.where,
          limit: fetchLimit(spec.limit),
          sort: sortOf(spec),
        },
        ctx,
      ),
    );
    return rows.map((r) => ({ key: r.key ?? null, value: numberOrNull(r.value) }));
  }

  async groupByDate(
    className: string,
    spec: GroupByDateSpec,
    options: AggregateOptions = {},
  ): Promise<GroupRow[]> {
    const rows = await this.readRows('group_by_date', className, options, (ctx) =>
      groupByDateSql(
        {
          className,
          field: spec.field,
          interval: spec.interval as DateInterval,
          timeZone: spec.timezone || 'UTC',
          accumulator: spec.operation,
          valueField: spec.valueField,
          where: spec.where,
          limit: fetchLimit(spec.limit),
          sort: sortOf(spec) ?? 'key_asc',
        },
        ctx,
      ),
    );
    return rows.map((r) => ({ key: r.at ?? null, value: numberOrNull(r.value) }));
  }

  async distinct(
    className: string,
    spec: DistinctSpec,
    options: AggregateOptions = {},
  ): Promise<unknown[]> {
    const rows = await this.readRows('distinct', className, options, (ctx) =>
      distinctSql(
        { className, field: spec.field, where: spec.where, limit: fetchLimit(spec.limit) },
        ctx,
      ),
    );
    return rows.map((r) => r.value);
  }

  /** Nearest chunks among rows this identity may read (see vectorSearchSql), with their rows. */
  async vectorSearch(
    className: string,
    spec: VectorSearchSpec,
    options: AggregateOptions = {},
  ): Promise<VectorSearchResult> {
    const record = await this.access.embeddings.recorded();
    return this.read('vector_search', className, options, (scope, run) =>
      vectorSearchOn(className, spec, record, {
        ctx: scope.ctx,
        fields: scope.snapshot.schemas[className].fields,
        run,
        efSearch: this.access.embeddings.efSearch,
        candidates: this.access.embeddings.candidates,
      }),
    );
  }

  async explain(
    className: string,
    query: DataFindQuery,
    options: AggregateOptions = {},
  ): Promise<ExplainSummary> {
    return this.read('explain', className, options, async (scope, run) => {
      const select = selectSql(
        {
          className,
          where: query.where,
          order: query.order,
          limit: query.limit || DEFAULT_FIND_LIMIT,
          offset: query.skip ?? 0,
        },
        scope.ctx,
      );
      return this.planOf(className, select, run);
    });
  }

  /** The plan of the SQL a (validated, scoped) pipeline compiles to; the query is not run. */
  async explainPipeline(
    className: string,
    pipeline: Record<string, unknown>[],
    options: AggregateOptions = {},
  ): Promise<ExplainSummary> {
    return this.read('explain', className, options, async (scope, run) =>
      this.planOf(className, compilePipeline(className, pipeline, scope.ctx), run),
    );
  }

  /** The planner's plan of `query` (not run) with the table's size, summarized for the guard. */
  private async planOf(className: string, query: SqlQuery, run: RunQuery): Promise<ExplainSummary> {
    const [plan] = await run(explainQuery(query));
    const [size] = await run(tableSizeQuery(className));
    const table: TableSize | undefined = size
      ? { rows: Number(size.rows), bytes: Number(size.bytes) }
      : undefined;
    return summarizePlan(
      className,
      plan?.['QUERY PLAN'],
      table,
      this.access.options.collscanMinRows,
    );
  }

  /** Runs the one statement `build` writes for the read's scope and returns its rows. */
  private readRows(
    operation: DataOperation,
    className: string,
    options: AggregateOptions,
    build: (ctx: SqlContext) => SqlQuery,
  ): Promise<Record<string, unknown>[]> {
    return this.read(operation, className, options, async (scope, run) => run(build(scope.ctx)));
  }

  /**
   * Rows of `className` in Parse REST's shape: the `keys` columns (else every visible one), the
   * `include` pointers followed and dotted keys pruned, as find and get answer.
   */
  private async readObjects(
    className: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    select: Omit<SelectInput, 'className' | 'columns'>,
    scope: ReadScope,
    run: RunQuery,
  ): Promise<DataRow[]> {
    const columns = selectedColumns(query.keys, scope.ctx.columnsFor(className));
    const rows = await run(selectSql({ className, columns, ...select }, scope.ctx));
    const shaped = rows.map((r) => apiRow(r, scope.snapshot.schemas[className].fields));
    await this.includePointers(shaped, query.include, query.keys, scope, run);
    return shaped.map((row) => pruneSubKeys(row, query.keys, query.include));
  }

  /** `'*'`, the user's objectId and its roles (inherited ones too), or the master key. */
  async principals(signal?: AbortSignal): Promise<DataPrincipals> {
    const reader = await this.access.principals.readerFor(this.identity, signal);
    return reader.master ? { master: true } : { master: false, principals: aclGroup(reader) };
  }

  async refreshPrincipals(): Promise<void> {
    await this.access.principals.forget(this.identity);
  }

  async protectedFields(className: string, signal?: AbortSignal): Promise<string[]> {
    const reader = await this.access.principals.readerFor(this.identity, signal);
    const info = (await this.access.catalog.snapshot()).classes.get(className);
    return info ? protectedFieldsFor(info.protectedFields, reader) : [];
  }

  /** Resolves who reads and the class rules, then runs `work` in one read-only transaction. */
  protected async read<T>(
    operation: DataOperation,
    className: string,
    options: AggregateOptions,
    work: (scope: ReadScope, run: RunQuery) => Promise<T>,
  ): Promise<T> {
    if (typeof className !== 'string' || !className) {
      throw new AgentValidationError('class_name must be a non-empty string.');
    }
    const reader = await this.access.principals.readerFor(this.identity, options.signal);
    const snapshot = await this.access.catalog.snapshot();
    const scope: ReadScope = {
      ctx: this.context(className, clpOperationFor(operation), snapshot, reader),
      snapshot,
      reader,
    };
    // The class gate and its CLP first, before any field of the query is looked at.
    scope.ctx.scopeFor(className);
    const timeoutMs = options.maxTimeMS ?? this.access.options.statementTimeoutMs ?? 30_000;
    return readOnly(this.access.pool, (run) => work(scope, run), {
      signal: options.signal,
      timeoutMs,
    });
  }

  protected context(
    rootClass: string,
    rootOperation: ClpOperation,
    snapshot: PgCatalogSnapshot,
    reader: PgReader,
  ): SqlContext {
    const principals = reader.master ? ('master' as const) : aclGroup(reader);
    return {
      schemas: snapshot.schemas,
      scopeFor: (className) => {
        const info = snapshot.classes.get(className);
        if (!info) {
          throw new AgentValidationError(
            `Unknown class '${className}'. Check the class name with get_all_schemas.`,
          );
        }
        if (
          className.startsWith('_') &&
          !reader.master &&
          !USER_READABLE_SYSTEM_CLASSES.has(className)
        ) {
          throw new AccessDeniedError(`${className} is readable only with the master key.`, {
            kind: 'clp_denied',
          });
        }
        const op = className === rootClass ? rootOperation : 'find';
        const decision = checkClassPermission(className, info.clp, info.schema, reader, op);
        let where: Where | undefined;
        if (decision.rows === 'pointer') where = decision.where;
        else if (decision.rows === 'none') where = { objectId: { $in: [] } };
        return { principals, where };
      },
      columnsFor: (className) => {
        const info = snapshot.classes.get(className);
        if (!info) return [];
        const hidden = new Set(protectedFieldsFor(info.protectedFields, reader));
        // Relations live in join tables, not in a column of the class: nothing to select.
        return Object.keys(info.schema.fields).filter(
          (name) =>
            !hidden.has(name) && !isInternalField(name) && isColumnField(info.schema.fields[name]),
        );
      },
    };
  }

  /**
   * Replaces pointers named by `include` with the objects they point to, read through the same
   * scope (row ACL, CLP, protectedFields of the target class).
   */
  protected async includePointers(
    rows: DataRow[],
    include: readonly string[] | undefined,
    keys: readonly string[] | undefined,
    scope: ReadScope,
    run: RunQuery,
  ): Promise<void> {
    if (!include?.length || !rows.length) return;
    const paths = [...new Set(include)].sort((a, b) => a.split('.').length - b.split('.').length);
    for (const path of paths) {
      const segments = path.split('.');
      const last = segments.pop() as string;
      let holders: DataRow[] = rows;
      for (const segment of segments) {
        holders = holders.flatMap((h) => objectsAt(h[segment]));
      }
      const byClass = new Map<string, Set<string>>();
      for (const holder of holders) {
        for (const ptr of pointersAt(holder[last])) {
          let ids = byClass.get(ptr.className);
          if (!ids) byClass.set(ptr.className, (ids = new Set()));
          ids.add(ptr.objectId);
        }
      }
      const found = new Map<string, DataRow>();
      for (const [target, ids] of byClass) {
        // As on Parse REST, a class-level refusal of the target fails the read.
        const fetched = await run(
          selectSql(
            {
              className: target,
              columns: selectedColumns(subKeys(keys, path), scope.ctx.columnsFor(target)),
              where: { objectId: { $in: [...ids] } },
              limit: ids.size,
            },
            scope.ctx,
          ),
        );
        for (const row of fetched) {
          const shaped = apiRow(row, scope.snapshot.schemas[target].fields);
          found.set(`${target}$${String(row.objectId)}`, {
            ...shaped,
            __type: 'Object',
            className: target,
          });
        }
      }
      const resolve = (value: unknown): unknown => {
        const [ptr] = pointersAt(value);
        return ptr ? found.get(`${ptr.className}$${ptr.objectId}`) : value;
      };
      // A pointer the reader may not follow disappears, as Parse REST drops it.
      for (const holder of holders) {
        const value = holder[last];
        if (Array.isArray(value)) {
          holder[last] = value.map(resolve).filter((v) => v !== undefined);
        } else if (pointersAt(value).length) {
          const object = resolve(value);
          if (object === undefined) delete holder[last];
          else holder[last] = object;
        }
      }
    }
  }
}

const ALWAYS_SELECTED = ['objectId', 'createdAt', 'updatedAt'];

/** The columns a `keys` list selects (by its heads, plus the fields Parse always returns). */
function selectedColumns(
  keys: readonly string[] | undefined,
  visible: readonly string[],
): string[] | undefined {
  if (!keys?.length) return [...visible];
  const heads = new Set([...ALWAYS_SELECTED, ...keys.map((k) => k.split('.')[0])]);
  const columns = visible.filter((name) => heads.has(name));
  return columns.length ? columns : visible.filter((n) => n === 'objectId');
}

/** The `keys` below `path` (`customer.name` -> `name` for path `customer`). */
function subKeys(keys: readonly string[] | undefined, path: string): string[] | undefined {
  if (!keys?.length) return undefined;
  const prefix = `${path}.`;
  const below = keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  return below.length ? below : undefined;
}

/** Dotted keys into Object fields return only those sub-keys, as Parse does. */
function pruneSubKeys(
  row: DataRow,
  keys: readonly string[] | undefined,
  include: readonly string[] | undefined,
): DataRow {
  if (!keys?.length) return row;
  const nested = new Map<string, Set<string>>();
  for (const key of keys) {
    const dot = key.indexOf('.');
    if (dot < 0) continue;
    const head = key.slice(0, dot);
    if (include?.some((p) => p === head || p.startsWith(`${head}.`))) continue;
    if (keys.includes(head)) continue;
    let set = nested.get(head);
    if (!set) nested.set(head, (set = new Set()));
    set.add(key.slice(dot + 1).split('.')[0]);
  }
  for (const [head, wanted] of nested) {
    const value = row[head];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const v = value as Record<string, unknown>;
    if (v.__type) continue;
    row[head] = Object.fromEntries(Object.entries(v).filter(([k]) => wanted.has(k)));
  }
  return row;
}

function objectsAt(value: unknown): DataRow[] {
  const list = Array.isArray(value) ? value : [value];
  return list.filter(
    (v): v is DataRow => typeof v === 'object' && v !== null && (v as DataRow).__type === 'Object',
  );
}

function pointersAt(value: unknown): Array<{ className: string; objectId: string }> {
  const list = Array.isArray(value) ? value : [value];
  const out: Array<{ className: string; objectId: string }> = [];
  for (const v of list) {
    const p = v as Record<string, unknown> | null;
    if (
      p &&
      typeof p === 'object' &&
      p.__type === 'Pointer' &&
      typeof p.className === 'string' &&
      typeof p.objectId === 'string'
    ) {
      out.push({ className: p.className, objectId: p.objectId });
    }
  }
  return out;
}

/** Paths return one more row than asked, so the tool can say the answer was truncated. */
function fetchLimit(limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new AgentValidationError(`limit must be a positive whole number; got ${String(limit)}.`);
  }
  return limit + 1;
}

/** An optional `sort` on the spec (value_desc, value_asc, key_asc, key_desc). */
function sortOf(spec: object): GroupOrder | undefined {
  const sort = (spec as { sort?: unknown }).sort;
  return sort === undefined ? undefined : (sort as GroupOrder);
}

function numberOrNull(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}
