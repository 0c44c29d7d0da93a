// `nestjs-parse-agent/data`: building blocks of data access. The DataPath interface a provider
// implements (the DataPathProvider token is a root name) and the router's ranking, the read and
// write policies with the policed reader and writer custom tools receive, what a tool's context
// hands out, schema and metadata shapes, the built-in database paths' settings and their errors.

// Data paths and how the router ranks them
export { DATA_PATH_RANK, directDatabaseRank, PARSE_SERVER_FIRST } from './ports/data-path';
export type {
  DataClassSpec,
  DataCreateResult,
  DataFindQuery,
  DataOperation,
  DataPath,
  DataPathProvidersOption,
  DataPrincipals,
  DataRow,
  SearchResult,
  SearchSpec,
} from './ports/data-path';
export { DataPathUnavailableError } from './data/data-router';
export type { ParseSchema, SchemaSource } from './core/parse-schema';

// The built-in database paths: `database: { kind, uri }`, the `postgres` and `mongo` settings
export type { DatabaseSetting, DataPathOptions } from './composition/data-paths';
export type { PostgresDataPathOptions } from './data/postgres/postgres-data-access';
export type { PgClientLike, PgPoolClientLike, PgPoolLike } from './data/postgres/pg-driver';
export { DatabaseTimeoutError } from './data/postgres/pg-read-transaction';
export type { MongoPathOptions } from './data/mongo/create-mongo-data-path';
export type { AtlasVectorIndex } from './data/mongo/mongo-vector-search';
export { MongoTimeLimitError } from './data/mongo/mongo-data-path';

// Policies, and the policed access custom tools get
export type { ListFilterInput } from './security/class-filter';
export type { PlannedRead, ReadPolicy, ReadRequest } from './security/read-policy';
export type { ClassAccessPolicy } from './security/class-access-policy';
export { WritePolicy } from './security/write-policy';
export type { PlannedWrite } from './security/write-policy';
export type { PolicedReader } from './tools/read/policed-reader';
export type { PolicedWrite, PolicedWriter } from './tools/write/policed-writer';
export type { MasterToolRegistration, PolicedToolRegistration } from './tools/custom-tool';
export type {
  AnalyticsSettings,
  ConfirmationRequest,
  MutationAuditInput,
  ProgressUpdate,
  ToolAgent,
} from './tools/tool-context';

// Field floors, hidden classes and the metadata the registry keeps
export { ALWAYS_KEEP_FIELDS } from './core/constants';
export { INTERNAL_FIELDS } from './query/internal-fields';
export { BUILTIN_HIDDEN_CLASSES } from './metadata/builtin-hidden-classes';
export type { UnregisteredClassPolicy } from './metadata/builtin-hidden-classes';
export type { MetadataRegistryOptions } from './metadata/metadata-registry';
export type { ClassMetadata, RelationEdge } from './metadata/metadata.types';

// Retrieval's building blocks (semantic_search, the SearchIndexer).
export type { SearchableChunking, SearchableDeclaration } from './metadata/metadata.types';
export { EmbeddingStore } from './ports/embedding-store';
export type { EmbeddingModelRecord, StoredChunk } from './ports/embedding-store';
export type { IndexableRow, IndexOptions, IndexOutcome } from './retrieval/search-indexer';
export type { EmbeddingCallUsage, EmbeddingSpendLimiter } from './retrieval/retrieval-call';
export type { LocalLexicalEmbedderOptions } from './ports/local-lexical-embedder';
