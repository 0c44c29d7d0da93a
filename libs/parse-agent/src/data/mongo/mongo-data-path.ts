import type { AgentIdentity } from '../../core/agent-identity';
import { AgentValidationError, ParseAgentError } from '../../core/errors';
import {
  type AggregateOptions,
  type DataFindQuery,
  type DataOperation,
  type DataPath,
  type DataPathProvider,
  type DataPrincipals,
  type DataRow,
  type ExplainSummary,
  type SearchResult,
  type SearchSpec,
  type VectorSearchResult,
  type VectorSearchSpec,
} from '../../ports/data-path';
import { classesNamed } from '../../query/pipeline-classes';
import { clpRowMatch, protectedFieldsFor, type ClpOperation } from './mongo-clp';
import type { MongoCursorLike, MongoDatabaseLike, MongoDoc } from './mongo-driver';
import { summarizeExplain } from './mongo-explain';
import { mongoPipeline, type MongoClassSource } from './mongo-pipeline';
import type { MongoPrincipalResolver, Principals } from './mongo-principals';
import type { MongoClassSchema, MongoSchemaCache } from './mongo-schema';
import { SEARCH_SCORE_FIELD, searchPipeline } from './mongo-search';
import {
  type AtlasVectorIndex,
  VECTOR_SCORE_FIELD,
  vectorSearchPipeline,
} from './mongo-vector-search';
import { aclMatchStage, storageViewStage } from './mongo-storage';
import { handOverRows } from '../handed-over-rows';
import { printClassAs } from '../../core/secret-display';

/** MongoDB stopped the operation at its `maxTimeMS` (wire: `timeout`). */
export class MongoTimeLimitError extends ParseAgentError {
  readonly errorCode = 'timeout';
  constructor() {
    super('Query exceeded time limit. Narrow the filter or add an index.');
  }
}

const ATLAS_VECTOR_REFUSAL =
  'semantic_search on MongoDB needs Atlas Vector Search: set mongo.atlasVectorSearch to { index: <the Atlas Vector Search index name> } on an Atlas cluster with that index';

/** Parse-only query operators that have no MongoDB meaning on this path. */
const PARSE_ONLY_OPERATORS = new Set([
  '$inQuery',
  '$notInQuery',
  '$select',
  '$dontSelect',
  '$relatedTo',
  '$containedBy',
  '$within',
  '$nearSphere',
  '$centerSphere',
  '$polygon',
  '$text',
]);

/** Everything a bound path shares with its provider. */
export interface MongoPathServices {
  db: () => Promise<MongoDatabaseLike>;
  collection: (className: string) => string;
  schemas: MongoSchemaCache;
  principals: MongoPrincipalResolver;
  /** Resolves a session token to its user's objectId (Parse's `/users/me`), once per token. */
  sessionUser: (sessionToken: string, signal?: AbortSignal) => Promise<string>;
  /** Server-level protectedFields Parse Server merges into every class's CLP (`{ _User: { '*': ['email'] } }`). */
  serverProtectedFields: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  /** Atlas Vector Search is configured (mongo.atlasVectorSearch): vector_search is served. */
  atlasVectorSearch?: AtlasVectorIndex;
}

/**
 * The direct MongoDB path bound to one identity. Here the library is the only enforcement: each
 * class source gets the `_rperm` match, the CLP check (and row match for pointer permissions) and a
 * view that drops internal and protected fields; `maxTimeMS` and the AbortSignal stop the cursor.
 */
export class MongoDataPath implements DataPath {
  readonly kind = 'mongo';
  protected principalsValue?: Promise<Principals | undefined>;

  constructor(
    protected readonly services: MongoPathServices,
    protected readonly identity: AgentIdentity,
  ) {}

  /** Undefined for the master key (no row ACL, no CLP, no protectedFields: Parse's own rule). */
  protected scopePrincipals(signal?: AbortSignal): Promise<Principals | undefined> {
    return (this.principalsValue ??= this.resolvePrincipals(signal));
  }

  protected async resolvePrincipals(signal?: AbortSignal): Promise<Principals | undefined> {
    const who = this.identity;
    if (who.aclUser) return this.services.principals.forUser(who.aclUser);
    if (who.aclRole) return this.services.principals.forRole(who.aclRole);
    if (who.sessionToken) {
      const userId = await this.services.sessionUser(who.sessionToken, signal);
      return this.services.principals.forUser(userId);
    }
    if (who.usingMasterKey) return undefined;
    // An identity this path does not recognise reads nothing but public rows.
    return { names: ['*'] };
  }

  /** `'*'`, the user's objectId and its roles (inherited ones too), or the master key. */
  async principals(signal?: AbortSignal): Promise<DataPrincipals> {
    const principals = await this.scopePrincipals(signal);
    return principals ? { master: false, principals: [...principals.names] } : { master: true };
  }

  async refreshPrincipals(signal?: AbortSignal): Promise<void> {
    this.principalsValue = undefined;
    const who = this.identity;
    if (who.aclUser) this.services.principals.invalidate({ userId: who.aclUser });
    if (who.aclRole) this.services.principals.invalidate({ role: who.aclRole });
    if (who.sessionToken) {
      const userId = await this.services.sessionUser(who.sessionToken, signal);
      this.services.principals.invalidate({ userId });
    }
  }

  protected async schema(className: string): Promise<MongoClassSchema> {
    const schema = await this.services.schemas.get(className);
    if (!schema) {
      throw new AgentValidationError(
        `Class '${className}' does not exist. Call get_all_schemas to see the classes.`,
      );
    }
    return schema;
  }

  /** Guards and view for every class a pipeline reads (CLP checked here, before anything runs). */
  protected async sources(
    classNames: readonly string[],
    operation: ClpOperation,
    signal?: AbortSignal,
  ): Promise<Map<string, MongoClassSource>> {
    const principals = await this.scopePrincipals(signal);
    const out = new Map<string, MongoClassSource>();
    for (const className of new Set(classNames)) {
      const schema = await this.schema(className);
      const guards: MongoDoc[] = [];
      let hidden = new Set<string>();
      if (principals) {
        guards.push(aclMatchStage(principals));
        const rowMatch = clpRowMatch(className, schema.clp, operation, principals);
        if (rowMatch) guards.push({ $match: rowMatch });
        hidden = protectedFieldsFor(this.mergedClp(className, schema), principals);
      }
      out.set(className, { schema, guards, view: storageViewStage(schema, hidden) });
    }
    return out;
  }

  protected mergedClp(className: string, schema: MongoClassSchema): Record<string, unknown> {
    const server = this.services.serverProtectedFields[className];
    if (!server) return schema.clp ?? {};
    const own = (schema.clp?.protectedFields ?? {}) as Record<string, string[]>;
    const merged: Record<string, string[]> = { ...own };
    for (const [key, list] of Object.entries(server)) {
      merged[key] = [...new Set([...(own[key] ?? []), ...list])];
    }
    return { ...(schema.clp ?? {}), protectedFields: merged };
  }

  async protectedFields(className: string, signal?: AbortSignal): Promise<string[]> {
    const principals = await this.scopePrincipals(signal);
    const schema = await this.services.schemas.get(className);
    if (!principals || !schema) return [];
    return [...protectedFieldsFor(this.mergedClp(className, schema), principals)];
  }

  /** Runs a validated pipeline (API names) on `className`. */
  async aggregate(
    className: string,
    pipeline: Record<string, unknown>[],
    options: AggregateOptions = {},
  ): Promise<DataRow[]> {
    const mongo = await this.build(className, pipeline, 'find', options.signal);
    const rows = await this.run(className, mongo, options);
    return rows.map(plainDates) as DataRow[];
  }

  /** The pipeline exactly as it would run (for specs, dry runs and audits). */
  async build(
    className: string,
    pipeline: readonly Record<string, unknown>[],
    operation: ClpOperation,
    signal?: AbortSignal,
  ): Promise<MongoDoc[]> {
    const classes = [className, ...classesNamed(pipeline)];
    const sources = await this.sources(classes, operation, signal);
    return mongoPipeline(className, pipeline, {
      source: (c) => {
        const s = sources.get(c);
        if (!s) throw new AgentValidationError(`Class '${c}' was not checked for this pipeline.`);
        return s;
      },
      collection: this.services.collection,
    });
  }

  protected async run(
    className: string,
    pipeline: MongoDoc[],
    options: AggregateOptions,
  ): Promise<MongoDoc[]> {
    const db = await this.services.db();
    const cursor = db
      .collection(this.services.collection(className))
      .aggregate(pipeline, options.maxTimeMS ? { maxTimeMS: options.maxTimeMS } : {});
    return drain(cursor, options.signal);
  }

  async find(className: string, query: DataFindQuery, signal?: AbortSignal): Promise<DataRow[]> {
    if (query.include?.length) {
      throw new AgentValidationError(
        `'include' is not available on the direct MongoDB path. Fetch the pointed-to objects with get_objects, or join with aggregate and $lookup.`,
      );
    }
    const stages: Record<string, unknown>[] = [];
    if (query.where && Object.keys(query.where).length) {
      assertMongoWhere(query.where);
      stages.push({ $match: query.where });
    }
    const sort = sortStage(query.order);
    if (sort) stages.push(sort);
    if (query.skip) stages.push({ $skip: query.skip });
    if (query.limit !== undefined) stages.push({ $limit: query.limit });
    if (query.keys?.length) {
      const project: Record<string, 1> = { objectId: 1, createdAt: 1, updatedAt: 1 };
      for (const key of query.keys) project[key] = 1;
      stages.push({ $project: project });
    }
    const pipeline = await this.build(className, stages, 'find', signal);
    const schema = await this.schema(className);
    const rows = await this.run(className, pipeline, { signal });
    return handOverRows(rows.map((row) => restShape(row, schema)));
  }

  async get(
    className: string,
    objectId: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    signal?: AbortSignal,
  ): Promise<DataRow | undefined> {
    const [row] = await this.find(className, { ...query, where: { objectId }, limit: 1 }, signal);
    return row;
  }

  async count(
    className: string,
    where: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<number> {
    const stages: Record<string, unknown>[] = [];
    if (Object.keys(where).length) {
      assertMongoWhere(where);
      stages.push({ $match: where });
    }
    stages.push({ $count: 'n' });
    const pipeline = await this.build(className, stages, 'count', signal);
    const [row] = await this.run(className, pipeline, { signal });
    return typeof row?.n === 'number' ? row.n : 0;
  }

  /** Atlas Search, then this identity's guards and view (see mongo-search.ts). */
  async search(
    className: string,
    spec: SearchSpec,
    options: AggregateOptions = {},
  ): Promise<SearchResult> {
    if (spec.where && Object.keys(spec.where).length) assertMongoWhere(spec.where);
    const sources = await this.sources([className], 'find', options.signal);
    const pipeline = searchPipeline(spec, sources.get(className)!);
    const schema = await this.schema(className);
    const docs = await this.run(className, pipeline, options);
    const hit = (doc: MongoDoc) => {
      const { [SEARCH_SCORE_FIELD]: score, ...row } = doc;
      return { row: restShape(row, schema), score: typeof score === 'number' ? score : null };
    };
    if (!spec.facets?.fields.length) return { rows: docs.map(hit) };
    const [out = {}] = docs as Array<Record<string, MongoDoc[]>>;
    const facets: NonNullable<SearchResult['facets']> = {};
    spec.facets.fields.forEach((field, i) => {
      facets[field] = (out[`f${i}`] ?? []).map((b) => ({
        value: plainDates(b._id),
        count: Number(b.count),
      }));
    });
    return { rows: (out.hits ?? []).map(hit), facets };
  }

  /**
   * Atlas `$vectorSearch` (tenant and filter fields pre-filtered), then this identity's guards and
   * view (see mongo-vector-search.ts). One chunk per document: the whole text field's vector.
   */
  async vectorSearch(
    className: string,
    spec: VectorSearchSpec,
    options: AggregateOptions = {},
  ): Promise<VectorSearchResult> {
    const index = this.services.atlasVectorSearch;
    if (!index) {
      throw new AgentValidationError(ATLAS_VECTOR_REFUSAL);
    }
    if (spec.where && Object.keys(spec.where).length) assertMongoWhere(spec.where);
    const sources = await this.sources([className], 'find', options.signal);
    const pipeline = vectorSearchPipeline(spec, sources.get(className)!, index, {
      tenantField: spec.prefilter?.tenantField,
      filterFields: spec.prefilter?.filterFields ?? [],
    });
    const schema = await this.schema(className);
    const docs = await this.run(className, pipeline, options);
    const chunks: VectorSearchResult['chunks'] = [];
    const rows: DataRow[] = [];
    for (const doc of docs) {
      const { [VECTOR_SCORE_FIELD]: score, ...raw } = doc;
      const row = restShape(raw, schema);
      const text = row[spec.field];
      rows.push(row);
      if (typeof text !== 'string' || typeof score !== 'number') continue;
      // The stored vector is the whole field's; its freshness is the application's to keep,
      // so no hash is known ('': never reported stale).
      chunks.push({
        objectId: String(row.objectId),
        chunk: 0,
        start: 0,
        end: text.length,
        sourceHash: '',
        score,
      });
    }
    return { chunks, rows, method: 'atlas' };
  }

  async explain(
    className: string,
    query: DataFindQuery,
    options: AggregateOptions = {},
  ): Promise<ExplainSummary> {
    const stages: Record<string, unknown>[] = [];
    if (query.where && Object.keys(query.where).length) {
      assertMongoWhere(query.where);
      stages.push({ $match: query.where });
    }
    const sort = sortStage(query.order);
    if (sort) stages.push(sort);
    const pipeline = await this.build(className, stages, 'find', options.signal);
    const db = await this.services.db();
    const cursor = db
      .collection(this.services.collection(className))
      .aggregate(pipeline, options.maxTimeMS ? { maxTimeMS: options.maxTimeMS } : {});
    if (!cursor.explain) {
      throw new AgentValidationError('This MongoDB connection cannot explain queries.');
    }
    try {
      return summarizeExplain(await cursor.explain('queryPlanner'));
    } catch (error) {
      throw translateMongoError(error);
    }
  }
}

/** Reads a cursor to the end; the signal closes it (the server stops the operation). */
async function drain(cursor: MongoCursorLike, signal?: AbortSignal): Promise<MongoDoc[]> {
  if (signal?.aborted) {
    await cursor.close().catch(() => undefined);
    throw signal.reason;
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      void cursor.close().catch(() => undefined);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await (signal ? Promise.race([cursor.toArray(), aborted]) : cursor.toArray());
  } catch (error) {
    throw signal?.aborted ? signal.reason : translateMongoError(error);
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

function translateMongoError(error: unknown): unknown {
  const code = (error as { code?: unknown })?.code;
  // 50 = MaxTimeMSExpired: the server gave up at the pushed-down limit.
  if (code === 50 || (error as { codeName?: unknown })?.codeName === 'MaxTimeMSExpired')
    return new MongoTimeLimitError();
  return error;
}

function assertMongoWhere(where: unknown): void {
  if (Array.isArray(where)) return where.forEach(assertMongoWhere);
  if (typeof where !== 'object' || where === null) return;
  for (const [key, inner] of Object.entries(where)) {
    if (key === '$within') {
      throw new AgentValidationError(
        `'$within' is Parse Server's geo constraint: Parse REST runs it (query_class, count_objects and export_data for session and master-key agents), and the direct PostgreSQL path does too; the direct MongoDB path does not. On this path write the box in MongoDB's form, { "$geoWithin": { "$box": [[swLongitude, swLatitude], [neLongitude, neLatitude]] } }.`,
      );
    }
    if (PARSE_ONLY_OPERATORS.has(key)) {
      throw new AgentValidationError(
        `'${key}' is a Parse Server query operator that the direct MongoDB path does not run. Query the related class first and filter by its objectIds with $in.`,
      );
    }
    assertMongoWhere(inner);
  }
}

function sortStage(order: string | undefined): MongoDoc | undefined {
  if (!order) return undefined;
  const sort: Record<string, 1 | -1> = {};
  for (const raw of order.split(',')) {
    const f = raw.trim();
    if (f) sort[f.replace(/^-/, '')] = f.startsWith('-') ? -1 : 1;
  }
  return Object.keys(sort).length ? { $sort: sort } : undefined;
}

/** Dates as ISO strings, at any depth: the envelope is JSON either way. */
function plainDates(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(plainDates);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = plainDates(v);
  return out;
}

/** A view row in the shape Parse REST answers: typed pointers and dates, ISO timestamps. */
function restShape(row: MongoDoc, schema: MongoClassSchema): DataRow {
  const out: DataRow = {};
  for (const [key, value] of Object.entries(row)) {
    const field = schema.fields[key];
    if (value instanceof Date) {
      out[key] =
        key === 'createdAt' || key === 'updatedAt'
          ? value.toISOString()
          : { __type: 'Date', iso: value.toISOString() };
    } else if (field?.type === 'Pointer' && typeof value === 'string') {
      out[key] = { __type: 'Pointer', className: field.targetClass, objectId: value };
    } else out[key] = plainDates(value);
  }
  return out;
}

/**
 * Serves every read and analytics operation for every identity (master key, session token, aclUser,
 * aclRole): it enforces ACL, CLP and protectedFields itself. Writes stay with Parse REST.
 */
export class MongoDataPathProvider implements DataPathProvider {
  readonly kind = 'mongo';

  constructor(
    protected readonly services: MongoPathServices,
    protected readonly closeConnection: () => Promise<void> = async () => undefined,
    /** Atlas Search indexes exist (mongo.atlasSearch): the search operation is served. */
    protected readonly atlasSearch = false,
  ) {}

  /** Closes the client this library opened (never one the application passed in). */
  close(): Promise<void> {
    return this.closeConnection();
  }

  /** One small read of `_SCHEMA`: proves the connection and the login (the start-up check). */
  async probe(signal?: AbortSignal): Promise<void> {
    const db = await this.services.db();
    signal?.throwIfAborted();
    await db
      .collection(this.services.collection('_SCHEMA'))
      .aggregate([{ $limit: 1 }, { $project: { _id: 1 } }], { maxTimeMS: 5_000 })
      .toArray();
  }

  refusal(operation: DataOperation): string | undefined {
    if (operation === 'write') return 'the direct MongoDB path only reads';
    if (operation === 'vector_search' && !this.services.atlasVectorSearch) {
      return ATLAS_VECTOR_REFUSAL;
    }
    if (operation === 'search' && !this.atlasSearch) {
      return 'full-text search needs Atlas Search: set mongo.atlasSearch to true on an Atlas cluster with search indexes';
    }
    return undefined;
  }

  bind(identity: AgentIdentity): MongoDataPath {
    return new MongoDataPath(this.services, identity);
  }

  /** Drops cached schemas/CLP (one class or all) and principals, e.g. after a CLP or role change. */
  invalidate(className?: string): void {
    this.services.schemas.invalidate(className);
    this.services.principals.invalidate();
  }
}

// Reaches the MongoDB client, whose options hold the connection string.
printClassAs(MongoDataPathProvider, (provider) => ({ kind: provider.kind }));
