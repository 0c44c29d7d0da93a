import type { AgentIdentity } from '../core/agent-identity';

export type DataRow = Record<string, unknown>;

/** A read as the policy planned it: API field names, constraints already composed and normalized. */
export interface DataFindQuery {
  where?: Record<string, unknown>;
  keys?: string[];
  /**
   * Parse-style include, for applications calling a path themselves. The library's own reads
   * never send it: the policed reader joins each included class with a read of that class under
   * the agent's policy (tenant, filters, canonical filter), which a path's own include cannot know.
   */
  include?: string[];
  order?: string;
  limit?: number;
  skip?: number;
}

/** What a data path does for one tool call. */
export type DataOperation =
  | 'find'
  | 'get'
  | 'count'
  | 'aggregate'
  | 'group_by'
  | 'group_by_date'
  | 'distinct'
  | 'explain'
  | 'search'
  | 'vector_search'
  | 'write';

/** Operations that read rows one by one (Parse REST serves them for sessions and the master key). */
export const ROW_OPERATIONS: ReadonlySet<DataOperation> = new Set(['find', 'get', 'count']);

/**
 * Operations best sent through Parse Server when it serves them: it enforces ACL, CLP and
 * protectedFields itself and runs the app's triggers on writes.
 */
export const PARSE_SERVER_FIRST: ReadonlySet<DataOperation> = new Set([...ROW_OPERATIONS, 'write']);

/** Ranks a provider gives the operations it serves (`DataPathProvider.rank`). */
export const DATA_PATH_RANK = { fallback: 0, preferred: 1 } as const;

/**
 * How a direct database path ranks an operation: analytics first (it enforces ACL, CLP and
 * protectedFields in the library, where Parse REST /aggregate ignores them), row reads and writes
 * after Parse Server. Also the rank of a provider that declares none.
 */
export function directDatabaseRank(operation: DataOperation): number {
  return PARSE_SERVER_FIRST.has(operation) ? DATA_PATH_RANK.fallback : DATA_PATH_RANK.preferred;
}

export type GroupOperation = 'count' | 'sum' | 'avg' | 'min' | 'max';

/** A `where` here is the policy's composed where (caller AND canonical AND filters AND tenant). */
export interface GroupBySpec {
  field: string;
  operation: GroupOperation;
  /** The summed / averaged field (operation other than count). */
  valueField?: string;
  where?: Record<string, unknown>;
  /** Groups to return; paths fetch one more so the tool can report truncation. */
  limit: number;
}

export interface GroupByDateSpec extends GroupBySpec {
  interval: 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year';
  /** IANA time zone name or UTC offset; buckets are computed in it. */
  timezone: string;
}

export interface DistinctSpec {
  field: string;
  where?: Record<string, unknown>;
  limit: number;
}

/**
 * A full-text search (MongoDB Atlas Search): `text` matches words anywhere in `paths`, `autocomplete`
 * matches what a person is typing in one field (it needs an autocomplete-typed index on it). The
 * `where` is the policy's composed where, applied after the search with the identity's ACL.
 */
export interface SearchSpec {
  mode: 'text' | 'autocomplete';
  /** The Atlas Search index name. */
  index: string;
  query: string;
  /** String fields searched (API names); autocomplete takes exactly one. */
  paths: string[];
  /** Typo tolerance: at most this many single-character edits (1 or 2). */
  fuzzyMaxEdits?: 1 | 2;
  where?: Record<string, unknown>;
  /** Fields returned besides objectId, createdAt and updatedAt; all visible ones when absent. */
  keys?: string[];
  limit: number;
  /**
   * Fields to count values of among the matching rows this identity may read (facets). Counted
   * after the ACL match, never from Atlas's own facet counts, which see every row.
   */
  facets?: { fields: string[]; limit: number };
}

/** Rows best first, each with its relevance (`score`), and the facet counts when asked. */
export interface SearchResult {
  rows: Array<{ row: DataRow; score: number | null }>;
  facets?: Record<string, Array<{ value: unknown; count: number }>>;
}

/**
 * A nearest-neighbour search over the stored chunk vectors of one text field (`@AgentSearchable`).
 * The `where` is the policy's composed where (caller AND canonical AND filters AND tenant): a path
 * applies it, with the identity's row ACL and CLP, BEFORE ranking, so the k documents are k rows
 * this identity may read.
 */
export interface VectorSearchSpec {
  /** The embedded text field (a column of the class). */
  field: string;
  /** The query's vector (unit length, the stored vectors' model and dimension). */
  vector: number[];
  /** The query text, for keyword ranking in hybrid mode. */
  text?: string;
  /** `hybrid`: fuse keyword (full-text) and vector ranks (reciprocal rank fusion). */
  mode?: 'vector' | 'hybrid';
  where?: Record<string, unknown>;
  /** Parent row fields returned besides objectId, createdAt and updatedAt; all when absent. */
  keys?: string[];
  /** Documents to return, best first. */
  k: number;
  /** Chunks returned per document (its best ones). */
  maxChunksPerDocument: number;
  /** Parse REST path only: most rows read and scored (the bounded candidate set). */
  candidateLimit?: number;
  /**
   * Fields a path's index may pre-filter on before ranking (Atlas `$vectorSearch` filter): the
   * tenant field (then required in the pre-filter) and the class's filter fields. The whole
   * `where` still applies after ranking.
   */
  prefilter?: { tenantField?: string; filterFields: readonly string[] };
}

/** One ranked chunk: where it sits in its document's field, and its score (cosine, or fused). */
export interface VectorSearchChunk {
  objectId: string;
  /** Position of the chunk in its field (0 first). */
  chunk: number;
  /** Character offsets of the chunk in the field's text when it was embedded. */
  start: number;
  end: number;
  /**
   * Hash of the field's whole text when it was embedded (a different one now: the chunk is stale);
   * '' when the path cannot know it (Atlas: the application keeps its vectors current).
   */
  sourceHash: string;
  score: number;
}

export interface VectorSearchResult {
  /** Best first; only chunks of `rows`. */
  chunks: VectorSearchChunk[];
  /** The parent rows (raw, to be redacted by the reader), documents best first. */
  rows: DataRow[];
  /** How the ranking ran: `exact` scan, `hnsw` (pgvector), `bounded` (Parse REST candidates), `atlas`. */
  method: 'exact' | 'hnsw' | 'bounded' | 'atlas';
  /**
   * `hnsw`: the index's search width (`hnsw.ef_search`) the walk used. The ranking is then
   * approximate: some of the true nearest chunks may be missing; a wider search misses fewer.
   */
  searchWidth?: number;
  /** `hnsw`: how many nearest chunks the walk yielded at most before exact ranking. */
  walkedChunks?: number;
  /**
   * Hybrid mode: the keyword (full-text) ranking of chunks among the same allowed rows, best first;
   * the caller fuses it with `chunks` (reciprocal rank fusion). `rows` covers both.
   */
  keywordChunks?: VectorSearchChunk[];
  /** Bounded scans: how many rows were read and scored, and the bound. */
  candidates?: { scanned: number; limit: number; exhausted: boolean };
}

/** One group as a path returns it: the raw key (objectId for pointers, Date for date buckets). */
export interface GroupRow {
  key: unknown;
  value: number | null;
}

export interface AggregateOptions {
  signal?: AbortSignal;
  /** Server-side time limit, pushed down from the tool timeout. */
  maxTimeMS?: number;
}

/** A summary of how the database would run a query (no rows). */
export interface ExplainSummary {
  /** 'COLLSCAN' / 'IXSCAN' (MongoDB) or 'Seq Scan' / 'Index Scan' (PostgreSQL)... */
  winningPlan: string;
  collectionScan: boolean;
  indexesUsed: string[];
  details?: Record<string, unknown>;
}

/** What Parse answered for a created object. */
export interface DataCreateResult {
  objectId: string;
  createdAt?: string;
}

/** A new class: Parse field definitions ({ type, targetClass? }) and optional CLP. */
export interface DataClassSpec {
  fields: Record<string, { type: string; targetClass?: string }>;
  classLevelPermissions?: Record<string, unknown>;
}

/** Principals a CLP entry can name: `*`, a user's objectId, `role:Name`; `master` bypasses CLP. */
export type DataPrincipals = { master: true } | { master: false; principals: string[] };

/**
 * Reads and writes for ONE identity: a session token, an ACL scope or the master key is
 * bound when the path is created, so no tool ever handles credentials. Every call takes the tool's
 * AbortSignal and stops its I/O when it aborts.
 */
export interface DataPath {
  /** Which implementation answers: 'parse-rest', 'mongo', 'postgres', or an application's own. */
  readonly kind: string;
  /**
   * True when `aggregate` runs the pipeline on documents exactly as the database stores them,
   * internal columns included (Parse REST `/aggregate` on MongoDB). Whole documents (`$$ROOT`, a
   * `$facet` output, a joined row) would then carry password hashes and tokens into comparisons,
   * so the reader opens every class the pipeline reads with a projection to the fields the agent
   * may see. A path that presents its own view of each class first (the direct paths) leaves it
   * unset.
   */
  readonly aggregatesStoredDocuments?: boolean;
  find(className: string, query: DataFindQuery, signal?: AbortSignal): Promise<DataRow[]>;
  /** Undefined when the object does not exist or this identity may not read it. */
  get(
    className: string,
    objectId: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    signal?: AbortSignal,
  ): Promise<DataRow | undefined>;
  count(className: string, where: Record<string, unknown>, signal?: AbortSignal): Promise<number>;

  // Analytics: present only on paths that can answer them for this identity. The pipeline is the
  // validated one (API field names, scope stages already injected); the path adds row ACL, CLP and
  // protectedFields where it is the enforcement (direct database paths).
  aggregate?(
    className: string,
    pipeline: Record<string, unknown>[],
    options?: AggregateOptions,
  ): Promise<DataRow[]>;
  groupBy?(className: string, spec: GroupBySpec, options?: AggregateOptions): Promise<GroupRow[]>;
  groupByDate?(
    className: string,
    spec: GroupByDateSpec,
    options?: AggregateOptions,
  ): Promise<GroupRow[]>;
  distinct?(className: string, spec: DistinctSpec, options?: AggregateOptions): Promise<unknown[]>;
  explain?(
    className: string,
    query: DataFindQuery,
    options?: AggregateOptions,
  ): Promise<ExplainSummary>;
  /**
   * The plan of an aggregation pipeline (already validated and scoped by the read policy) without
   * running it: the direct PostgreSQL path explains the SQL it compiles the pipeline to.
   */
  explainPipeline?(
    className: string,
    pipeline: Record<string, unknown>[],
    options?: AggregateOptions,
  ): Promise<ExplainSummary>;
  /** Nearest chunks of an `@AgentSearchable` class among rows this identity may read. */
  vectorSearch?(
    className: string,
    spec: VectorSearchSpec,
    options?: AggregateOptions,
  ): Promise<VectorSearchResult>;
  /** Full-text search (Atlas Search on MongoDB): ranked rows this identity may read. */
  search?(className: string, spec: SearchSpec, options?: AggregateOptions): Promise<SearchResult>;
  /**
   * The fields of a class Parse's protectedFields hide from this identity (empty for the master
   * key, and for a class the path does not know). Names only: the policy uses them to shape its
   * projections and messages; the path still enforces protectedFields itself.
   */
  protectedFields?(className: string, signal?: AbortSignal): Promise<string[]>;

  // Writes: present only on paths that can run them for this identity (the 'write' operation).
  // Values are the write policy's checked ones; the path adds nothing and drops nothing.
  create?(className: string, values: DataRow, signal?: AbortSignal): Promise<DataCreateResult>;
  update?(
    className: string,
    objectId: string,
    values: DataRow,
    signal?: AbortSignal,
  ): Promise<{ updatedAt?: string }>;
  delete?(className: string, objectId: string, signal?: AbortSignal): Promise<void>;
  createClass?(className: string, spec: DataClassSpec, signal?: AbortSignal): Promise<void>;
  deleteClass?(className: string, signal?: AbortSignal): Promise<void>;
  /** Who this identity is for CLP checks (the user's objectId and roles), or the master key. */
  principals?(signal?: AbortSignal): Promise<DataPrincipals>;
  /**
   * Forgets the principals cached for this path's identity (its user's roles, an aclRole's
   * inherited roles), so the next call resolves them again: after a role change at run time.
   */
  refreshPrincipals?(signal?: AbortSignal): Promise<void>;
}

/**
 * One way to reach the data (Parse REST, a direct database driver). The data router asks each
 * provider whether it serves an operation for an identity, takes the highest-ranked one that does,
 * and fails closed when none does: a scoped identity is never served by a path that cannot
 * enforce its scope.
 */
export interface DataPathProvider {
  readonly kind: string;
  /** Undefined when this provider serves the operation for the identity; else why not. */
  refusal(operation: DataOperation, identity: AgentIdentity): string | undefined;
  bind(identity: AgentIdentity): DataPath;
  /**
   * How strongly this provider asks for an operation it serves when others serve it too: the router
   * takes the highest rank, the earlier provider on a tie. Without it the provider ranks like a
   * direct database path (`directDatabaseRank`); Parse REST ranks the other way round.
   */
  rank?(operation: DataOperation): number;
  /**
   * Releases what the provider opened itself (a database client it connected), at shutdown. Called
   * only by whoever created the provider: an application's own provider is closed by the
   * application.
   */
  close?(): void | Promise<void>;
  /**
   * Drops what the provider caches about the database (schemas, CLP, role expansions), so the next
   * call reads them afresh: `ParseAgentFactory.invalidateCaches()` calls it after a schema or role
   * change made at run time.
   */
  invalidate?(): void;
}

/**
 * The data path providers an application supplies (the `dataPathProviders` option): a list that
 * replaces the library's (Parse REST and the direct database paths), or a function that receives the
 * library's list and returns the one to use (to add a path, reorder, or drop one).
 */
export type DataPathProvidersOption =
  DataPathProvider[] | ((defaults: DataPathProvider[]) => DataPathProvider[]);

/** Injection token for the data path providers (an array) the data router ranks. */
export const DataPathProvider = Symbol('DataPathProvider');
