import type { AgentServices } from '../agent/parse-agent';
import { conversationFactory, resolveLlmProvider } from '../client/conversation-factory';
import { AgentEvents } from '../core/agent-events';
import { ParseAgentConfigError } from '../core/errors';
import { DataRouter } from '../data/data-router';
import { AclScopedWriteProvider } from '../security/acl-scoped-write-path';
import { ParseRestClient, type ParseConnectionOptions } from '../data/parse-rest/parse-rest-client';
import {
  ParseRestDataPathProvider,
  type ParseDatabaseKind,
} from '../data/parse-rest/parse-rest-data-path';
import type { OpenedDataPath } from '../data/data-path-descriptor';
import { SchemaCache } from '../data/schema-cache';
import { BUILTIN_PROMPTS } from '../mcp/builtin-prompts';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { PromptRegistry } from '../mcp/prompt-registry';
import type { UnregisteredClassPolicy } from '../metadata/builtin-hidden-classes';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { warnUnscopedClasses } from '../metadata/unscoped-classes';
import type { ModelClass } from '../metadata/metadata.types';
import type { ConversationFactory, LlmProviderOptions } from '../ports/conversation';
import type { DataPathProvider, DataPathProvidersOption } from '../ports/data-path';
import { KeyedSlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import type { LlmProvider } from '../ports/llm-provider';
import { isEmbeddingProvider, type EmbeddingProvider } from '../ports/embedding-provider';
import { SearchIndexer } from '../retrieval/search-indexer';
import { EmbeddingSpendCap, type EmbeddingSpendCapOptions } from '../retrieval/embedding-spend-cap';
import type { EmbeddingSpendLimiter } from '../retrieval/retrieval-call';
import type { RateLimiter } from '../ports/rate-limiter';
import type { RedisConnection, RedisStoreLogger } from '../redis/redis-connection';
import { RedisRateLimiter } from '../redis/redis-rate-limiter';
import { BUILTIN_TOOLS } from '../tools/builtin';
import { ToolRegistry } from '../tools/tool-registry';
import { BUILTIN_DATA_PATHS, openDataPaths, type DataPathOptions } from './data-paths';

/**
 * What the services are built from: the part of `ParseAgentModule.forRoot`'s options they use. The
 * built-in database paths' options (`postgres`, `mongo`) come from their descriptors; a pool or
 * client made from a `uri` is closed by `close()`.
 */
export interface AgentCompositionOptions extends DataPathOptions {
  parse: ParseConnectionOptions & {
    /** What Parse Server runs on; only `'mongo'` sends master-key pipelines to REST /aggregate. */
    database?: ParseDatabaseKind;
  };
  models?: ModelClass[];
  hiddenClasses?: Array<string | { className: string; except?: 'masterKey' }>;
  unregisteredClasses?: UnregisteredClassPolicy;
  analytics?: AgentServices['analytics'];
  queryLimits?: AgentServices['queryLimits'];
  /** Data-path operations slower than this (ms) are logged as SLOW lines (default: no log). */
  slowQueryThresholdMs?: number;
  /** How long Parse schemas are cached (ms, default 30 000). */
  schemaCacheTtlMs?: number;
  /** MCP tool results as untrusted data (default true). */
  wrapUntrustedData?: boolean;
  /** Default: a sliding window per identity (60 per 60 s), on Redis when there is a connection. */
  rateLimiter?: RateLimiter;
  /** Default: Parse REST, then the PostgreSQL and MongoDB paths that are configured. */
  dataPathProviders?: DataPathProvidersOption;
  /** The model behind conversations; takes the place of `llm`. */
  llmProvider?: LlmProvider;
  /**
   * The embeddings behind semantic_search and the indexer (`new LocalLexicalEmbedder()`, or an
   * OpenAI-compatible model). Default none: semantic_search then refuses, saying what to set.
   */
  embeddings?: EmbeddingProvider;
  /**
   * A per-tenant cap on the embedding tokens semantic_search's queries spend: `{ maxTokens,
   * windowSeconds }` (in this process) or an EmbeddingSpendLimiter of your own. Default none.
   */
  embeddingSpendCap?: EmbeddingSpendCapOptions | EmbeddingSpendLimiter;
  /**
   * Parse REST only (no direct database path): the newest rows one semantic_search reads and
   * embeds on the fly (default 500, at most 5000). Its result says how many were considered.
   */
  semanticSearchCandidateLimit?: number;
  /** A provider or provider options; default LLM_* from the environment when LLM_PROVIDER is set. */
  llm?: LlmProvider | LlmProviderOptions;
  /**
   * How agents open conversations. Default: the client's conversations with the resolved model.
   * `null`: agents of these services hold none (`ask()` says so).
   */
  conversations?: ConversationFactory | null;
}

/** What the host gives the root besides options: resources it owns and where lines go. */
export interface AgentCompositionContext {
  /** The Redis connection the host opened (the rate limiter then lives on it), or none. */
  redis?: RedisConnection | null;
  /** Agent warnings and tool failures. */
  warn?: (message: string) => void;
  /** Where the Redis-backed rate limiter reports a Redis failure. */
  redisLogger?: RedisStoreLogger;
  /** Names the options in error messages (default `createAgentServices`). */
  optionsName?: string;
}

/** Everything agents and the MCP dispatcher run on, built once from one options object. */
export interface AgentComposition {
  services: AgentServices;
  metadata: MetadataRegistry;
  tools: ToolRegistry;
  prompts: PromptRegistry;
  dispatcher: McpDispatcher;
  events: AgentEvents;
  rateLimiter: RateLimiter;
  parse: ParseRestClient;
  schemas: SchemaCache;
  /**
   * The built-in database paths opened from the options (none when a `dataPathProviders` list
   * replaced them): the start-up check probes them, `close()` closes them.
   */
  opened: readonly OpenedDataPath[];
  /** The providers the router tries: the library's, or the application's. */
  dataPathProviders: DataPathProvider[];
  data: DataRouter;
  /** The configured language model, or null (conversations then say how to configure one). */
  llm: LlmProvider | null;
  /** The configured embeddings, or null. */
  embeddings: EmbeddingProvider | null;
  /**
   * Keeps stored chunk vectors fresh (the save path, `parse-agent embed`): present with
   * embeddings and a database that stores vectors (the PostgreSQL path).
   */
  indexer: SearchIndexer | null;
  /**
   * Releases what was opened here: the keep-alive sockets to Parse Server and the database
   * clients of the library's own data paths. An application's pool, client, Redis connection and
   * data path providers are left open.
   */
  close(): Promise<void>;
}

/**
 * The one composition root: the Nest module (through its providers), the standalone server (a Nest
 * app on that module), `createAgentServices` and the CLI build their services here, so a setting
 * means the same thing on every host. Port options replace the library's defaults.
 */
export function composeAgentServices(
  options: AgentCompositionOptions,
  context: AgentCompositionContext = {},
): AgentComposition {
  const optionsName = context.optionsName ?? 'createAgentServices';
  const fail = (problem: string): never => {
    throw new ParseAgentConfigError(`${optionsName}: ${problem}`);
  };
  checkPortOptions(options, fail);

  const metadata = new MetadataRegistry({ unregisteredClasses: options.unregisteredClasses });
  metadata.register(...(options.models ?? []));
  for (const entry of options.hiddenClasses ?? []) {
    if (typeof entry === 'string') metadata.hide(entry);
    else metadata.hide(entry.className, { except: entry.except });
  }
  // Once per class: a visible class without a tenant scope beside scoped ones (the Nest module
  // checks again at bootstrap, once forFeature models are registered too).
  warnUnscopedClasses(metadata);
  // Failing subscribers of the public streams are reported where the host's warnings go.
  const tools = new ToolRegistry(BUILTIN_TOOLS, { warn: context.warn });
  const prompts = new PromptRegistry(BUILTIN_PROMPTS, { warn: context.warn });
  const dispatcher = new McpDispatcher(tools, prompts, {
    wrapUntrustedData: options.wrapUntrustedData,
  });
  const events = new AgentEvents({ warn: context.warn });
  const redis = context.redis ?? null;
  // With a Redis connection the window is shared by every node (one limit per principal overall).
  const rateLimiter =
    options.rateLimiter ??
    (redis
      ? new RedisRateLimiter(redis, { logger: context.redisLogger })
      : new KeyedSlidingWindowRateLimiter());
  const parse = new ParseRestClient(options.parse);
  const schemas = new SchemaCache(parse, options.schemaCacheTtlMs ?? 30_000);

  // The library's own paths are built only when they are used: a replacing list skips them.
  const own = options.dataPathProviders;
  let library: ReturnType<typeof libraryDataPaths> | undefined;
  let dataPathProviders: DataPathProvider[];
  if (Array.isArray(own)) dataPathProviders = [...own];
  else {
    library = libraryDataPaths(options, parse, context.warn, () => data);
    dataPathProviders = own ? own(library.paths) : library.paths;
  }
  if (!Array.isArray(dataPathProviders) || !dataPathProviders.every(isDataPathProvider)) {
    fail(
      'dataPathProviders returned something other than a list of DataPathProviders (objects with kind, refusal() and bind()).',
    );
  }
  const opened = library?.opened ?? [];
  // The ACL-scoped write provider reads through the router once it exists (`() => data`).
  const data = new DataRouter(dataPathProviders);

  // Given conversations bring their own model: the environment is then not read here.
  const llm =
    options.llmProvider ??
    (options.conversations === undefined ? resolveLlmProvider(options.llm) : undefined) ??
    null;
  const conversations =
    options.conversations === undefined
      ? conversationFactory({ provider: llm ?? undefined })
      : (options.conversations ?? undefined);
  const embeddings = options.embeddings ?? null;
  const store = opened.find((path) => path.embeddingStore)?.embeddingStore;
  const indexer = embeddings && store ? new SearchIndexer(metadata, embeddings, store) : null;
  const services: AgentServices = {
    data,
    schemas,
    metadata,
    tools,
    events,
    rateLimiter,
    analytics: options.analytics,
    queryLimits: options.queryLimits,
    slowQueryMs: options.slowQueryThresholdMs,
    conversations,
    warn: context.warn,
    retrieval: {
      embeddings,
      spendCap: spendCapOf(options.embeddingSpendCap),
      candidateLimit: options.semanticSearchCandidateLimit,
    },
  };

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      parse.close();
      // Only the clients the library's own paths opened; an application's providers stay open.
      for (const path of opened) await path.close();
    })());

  return {
    services,
    metadata,
    tools,
    prompts,
    dispatcher,
    events,
    rateLimiter,
    parse,
    schemas,
    opened,
    dataPathProviders,
    data,
    llm,
    embeddings,
    indexer,
    close,
  };
}

/** Parse REST, then the built-in database paths the options configure. */
function libraryDataPaths(
  options: AgentCompositionOptions,
  parse: ParseRestClient,
  warn: ((message: string) => void) | undefined,
  router: () => DataRouter,
): { paths: DataPathProvider[]; opened: OpenedDataPath[] } {
  const rest = new ParseRestDataPathProvider(parse, options.parse.database);
  // aclUser/aclRole writes: checked against CLP and row ACL here, then written with the master key.
  const aclWrites = new AclScopedWriteProvider({
    writer: rest,
    reads: {
      pathFor: (operation, identity) => router().pathFor(operation, identity),
      serves: (operation, identity) => router().serves(operation, identity),
    },
    schema: (className, signal) => parse.schema(className, signal),
  });
  // No driver connects here: each path connects on first use, so boot never waits on a database.
  const opened = openDataPaths(options, { parse, warn });
  return { paths: [rest, aclWrites, ...opened.map((path) => path.provider)], opened };
}

function spendCapOf(
  option: AgentCompositionOptions['embeddingSpendCap'],
): EmbeddingSpendLimiter | undefined {
  if (option === undefined) return undefined;
  if (typeof (option as EmbeddingSpendLimiter).charge === 'function') {
    return option as EmbeddingSpendLimiter;
  }
  return new EmbeddingSpendCap(option as EmbeddingSpendCapOptions);
}

function isDataPathProvider(value: unknown): value is DataPathProvider {
  const p = value as Partial<DataPathProvider> | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.kind === 'string' &&
    typeof p.refusal === 'function' &&
    typeof p.bind === 'function'
  );
}

/** Fails with one message naming the port option to fix. */
function checkPortOptions(options: AgentCompositionOptions, fail: (problem: string) => never) {
  const own = options.dataPathProviders;
  if (own !== undefined) {
    if (typeof own !== 'function' && !Array.isArray(own)) {
      fail(
        'dataPathProviders must be a list of DataPathProviders, or a function that receives the library’s list and returns the one to use.',
      );
    }
    if (Array.isArray(own)) {
      if (!own.length || !own.every(isDataPathProvider)) {
        fail(
          'dataPathProviders must hold at least one DataPathProvider (an object with kind, refusal() and bind()).',
        );
      }
      const unused = BUILTIN_DATA_PATHS.map((path) => path.kind).filter((kind) => options[kind]);
      if (unused.length) {
        fail(
          `a dataPathProviders list replaces the library's data paths, so ${unused.join(' and ')} would be ignored. Pass a function instead to keep them, e.g. dataPathProviders: (paths) => [...paths, myProvider], or drop ${unused.join(' and ')}.`,
        );
      }
    }
  }
  if (typeof (options.llm as Partial<LlmProvider> | null | undefined)?.complete === 'function') {
    fail(
      'llm takes the language model settings ({ provider, apiKey, model, baseURL }); pass an LlmProvider object as llmProvider.',
    );
  }
  const llm = options.llmProvider;
  if (llm !== undefined) {
    if (typeof (llm as Partial<LlmProvider> | null)?.complete !== 'function') {
      fail('llmProvider must be an LlmProvider (an object with a complete(request) method).');
    }
    if (options.llm !== undefined) {
      fail('pass the language model once: llmProvider (an LlmProvider) or llm, not both.');
    }
  }
  if (options.embeddings !== undefined && !isEmbeddingProvider(options.embeddings)) {
    fail(
      'embeddings must be an EmbeddingProvider (model, dimensions and an embed(texts) method), e.g. new LocalLexicalEmbedder().',
    );
  }
  if (
    options.rateLimiter !== undefined &&
    typeof (options.rateLimiter as Partial<RateLimiter> | null)?.check !== 'function'
  ) {
    fail('rateLimiter must have a check(key) method.');
  }
}
