import type { AgentOptions, ParseAgent } from '../agent/parse-agent';
import type { CancellationBus } from '../ports/cancellation-bus';
import type { DataPathProvidersOption } from '../ports/data-path';
import type { EventStore } from '../ports/event-store';
import type { SessionStore } from '../ports/session-store';
import type { ParseAgentAuthOptions } from '../auth/auth-options';
import type { DataPathOption, DataPathOptions } from '../composition/data-paths';
import type { LlmProviderOptions } from '../ports/conversation';
import type { LlmProvider } from '../ports/llm-provider';
import type { EmbeddingProvider } from '../ports/embedding-provider';
import type { EmbeddingSpendCapOptions } from '../retrieval/embedding-spend-cap';
import type { EmbeddingSpendLimiter } from '../retrieval/retrieval-call';
import type { RateLimiter } from '../ports/rate-limiter';
import type { ModelClass } from '../metadata/metadata.types';
import type { UnregisteredClassPolicy } from '../metadata/builtin-hidden-classes';
import type { QueryCostLimits } from '../core/constants';
import type { McpRequest } from '../transport/http/mcp-request';
import type { StartupCheckMode, StartupCheckOptions } from './startup-check';
import type { LiveQueryOptions } from '../live/live-query-options';

/**
 * The `redis` option of `forRoot`: exactly one of `url` or `client`. Typed without ioredis so that
 * apps without it compile; boot checks the value (`RedisConnectionOptions` from
 * `nestjs-parse-agent/redis` is the same option with ioredis types).
 */
export interface RedisModuleOption {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` (TLS). */
  url?: string;
  /**
   * Startup nodes of a Redis Cluster: `redis://[user:password@]host:port` (or rediss://) strings or
   * `{ host, port }`; the other nodes are discovered. Keys that a script uses together share a hash
   * tag, so each script stays in one slot (see docs/deployment.md, Redis Cluster).
   */
  cluster?: Array<string | { host: string; port: number }>;
  /**
   * An ioredis client the application owns (it is not closed by the module): `new Redis(...)`, or
   * `new Cluster([...])` for a Redis Cluster.
   */
  client?: RedisClientLike;
  /**
   * Prefix of every key and channel (default `parse-agent:`). Give deployments that share one Redis
   * different prefixes; nodes of one deployment must use the same.
   */
  keyPrefix?: string;
}

/** The part of an ioredis client that tells one apart at compile time; boot checks the rest. */
export interface RedisClientLike {
  duplicate(...args: never[]): unknown;
  publish(...args: never[]): unknown;
  eval(...args: never[]): unknown;
  evalsha(...args: never[]): unknown;
}

export interface ParseConnectionConfig {
  /** e.g. https://api.example.com/parse */
  serverURL: string;
  appId: string;
  /** Used for schema reads and master-key agents. */
  masterKey: string;
  javascriptKey?: string;
  /**
   * The database Parse Server stores its data in. Only `'mongo'` lets master-key agents send
   * pipelines to Parse REST /aggregate (Parse's PostgreSQL adapter mistranslates them); REST
   * distinct is used on either.
   */
  database?: 'mongo' | 'postgres';
  /** How long one request may wait on Parse Server before it fails (default 15 000 ms). */
  requestTimeoutMs?: number;
}

/**
 * The `mongo` option: the direct MongoDB path (Parse-on-MongoDB), as its descriptor takes it
 * (`uri` or an existing `client`, `dbName`, caches, `atlasSearch`). Needs the `mongodb` package.
 */
export type MongoConnectionConfig = DataPathOption<'mongo'>;

/** Switches for explain and the COLLSCAN guard (both off by default). */
export interface AnalyticsOptions {
  /** Refuse queries whose plan scans a whole collection (@AgentAllowCollscan classes excepted). */
  refuseCollscan?: boolean;
  /** Show index names and plans in explain results (they reveal the index topology). */
  exposeExplain?: boolean;
}

/**
 * The `postgres` option: the direct PostgreSQL path (Parse-on-PostgreSQL), ACL-safe analytics for
 * every identity and aclUser/aclRole reads, as its descriptor takes it. Needs the `pg` package;
 * pass `uri` or an existing `pg.Pool` as `pool` (left open when the module shuts down).
 */
export type PostgresConnectionConfig = DataPathOption<'postgres'>;

/** Defaults applied to every agent ParseAgentFactory creates (per-call options win). */
export type AgentDefaults = Omit<
  AgentOptions,
  'parent' | 'signal' | 'sessionToken' | 'aclUser' | 'aclRole' | 'impersonate'
>;

/**
 * `forRoot`'s options. The direct database paths (`postgres`, `mongo`) are the built-in paths'
 * options, one key per descriptor in `composition/data-paths.ts`.
 */
export interface ParseAgentModuleOptions extends DataPathOptions {
  parse: ParseConnectionConfig;
  analytics?: AnalyticsOptions;
  /** Models to register (feature modules can add theirs with ParseAgentModule.forFeature). */
  models?: ModelClass[];
  /**
   * Classes on the server that no registered model declares: 'hidden' (the default: agents reach
   * only what the application modelled, and the boot log lists what was left out) or 'visible'.
   */
  unregisteredClasses?: UnregisteredClassPolicy;
  /**
   * Cost caps checked on every where before it reaches Parse (subqueries, $or/$and clauses, $in
   * lengths, regexes, bytes). Unset entries keep DEFAULT_QUERY_COST_LIMITS.
   */
  queryLimits?: Partial<QueryCostLimits>;
  /**
   * MCP tool results as untrusted data (default true): the text is enclosed in a per-response
   * random delimiter with one line telling the model it is data, not instructions.
   * structuredContent is never wrapped.
   */
  wrapUntrustedData?: boolean;
  /** Classes to hide by name, for classes without a model. */
  hiddenClasses?: Array<string | { className: string; except?: 'masterKey' }>;
  defaults?: AgentDefaults;
  /**
   * Shares rate limits, MCP sessions, cancellations and list changes between nodes:
   * `{ url: 'redis://127.0.0.1:6379' }`, `{ cluster: ['redis://10.0.0.1:7000', ...] }` (a Redis
   * Cluster) or `{ client: new Redis(...) }` (the `ioredis` package, an optional peer
   * dependency). Without it, all of these live in this process.
   */
  redis?: RedisModuleOption;
  /**
   * MCP resource subscriptions (`resources/subscribe`) backed by Parse LiveQuery:
   * `{ classNames: ['Order'] }` (the classes Parse Server's own `liveQuery.classNames` lists) and,
   * when the LiveQuery server is not on Parse Server's URL, `serverURL: 'wss://...'`. Needs the
   * `parse` package. Without it, subscribe is not offered.
   */
  liveQuery?: LiveQueryOptions;
  /**
   * Shared by all agents; defaults to a sliding window per identity (60 per 60 s), on Redis with
   * the `redis` option, in this process otherwise.
   */
  rateLimiter?: RateLimiter;
  /** How long Parse schemas are cached (ms, default 30 000). */
  schemaCacheTtlMs?: number;
  /**
   * The slow-query log: a data-path operation of a tool call that takes longer than this many
   * milliseconds is logged as one `SLOW data operation ...` warning (path, class, identity kind,
   * stage names, rows, duration; never values). Unset: no log. Every operation is also an event on
   * `AgentEvents.dataOperations$` for whoever subscribes.
   */
  slowQueryThresholdMs?: number;
  /** At bootstrap, compare models with the server's schemas and log the gaps (a short table). */
  auditMetadataOnBoot?: boolean;
  /**
   * At bootstrap, prove the settings work: the master key (a master-key-only read on Parse Server)
   * and each direct database path (one query), each within `timeoutMs`. `'fail'` (the default)
   * fails the boot with a message naming the wrong setting; `'warn'` logs it and starts; `'off'`
   * skips the check. A Parse Server not reachable yet is waited for in the background (up to
   * `parseWaitMs`, default 30 s); `ParseAgentStartupCheck.ready()` settles when it answered.
   */
  startupCheck?: StartupCheckMode | StartupCheckOptions;
  /**
   * The settings of the language model behind `agent.ask()` and `ParseAgentFactory.conversation()`
   * (provider name, key, model, base URL). Default: LLM_PROVIDER, LLM_API_KEY, LLM_MODEL and
   * LLM_BASE_URL from the environment when LLM_PROVIDER is set, else none (conversations then
   * explain how to set one). A provider object of your own goes in `llmProvider`.
   */
  llm?: LlmProviderOptions;
  // Ports: each option replaces the library's default for its port token (nestjs/throttler's
  // pattern). To use a Nest provider of your own, inject it in forRootAsync's useFactory.
  /**
   * Where MCP sessions live (default: Redis with the `redis` option, else this process, sized by
   * the `mcp` session settings). The store enforces its own caps and expiry.
   */
  sessionStore?: SessionStore;
  /** Where resumable streams keep their events, when `mcp.resumable` is on (default as above). */
  eventStore?: EventStore;
  /** Delivers `notifications/cancelled` to the node running the call (default as above). */
  cancellationBus?: CancellationBus;
  /**
   * The data paths the router ranks. A list replaces the library's (Parse REST, and the `postgres`
   * and `mongo` paths, which it then may not name); a function receives the library's list and
   * returns the one to use, e.g. `(paths) => [...paths, myPath]`. The library closes only the
   * paths it created.
   */
  dataPathProviders?: DataPathProvidersOption;
  /**
   * The embeddings behind semantic_search and the SearchIndexer: `new LocalLexicalEmbedder()`
   * (lexical, in the process) or an OpenAI-compatible model. Default none.
   */
  embeddings?: EmbeddingProvider;
  /**
   * A per-tenant cap on the embedding tokens semantic_search's queries spend over a sliding window
   * (`{ maxTokens, windowSeconds }`), refused with `rate_limited` and `retryAfter`; or an
   * EmbeddingSpendLimiter of your own (shared across nodes). Admin agents are not charged.
   */
  embeddingSpendCap?: EmbeddingSpendCapOptions | EmbeddingSpendLimiter;
  /**
   * Parse REST only (no direct database path): the newest rows one semantic_search reads and
   * embeds on the fly (default 500, at most 5000). Its result says how many were considered.
   */
  semanticSearchCandidateLimit?: number;
  /** The language model behind conversations, as an LlmProvider of your own (instead of `llm`). */
  llmProvider?: LlmProvider;
  /** Silence the master-key and unhide banners (a deliberate global master-key deployment). */
  suppressSecurityBanners?: boolean;
  /**
   * What the shipped guards check: the operator key, the session check's cache and timeout, and
   * where a user's tenant comes from. Used by ParseSessionGuard, McpApiKeyGuard and
   * ParseAgentAuthGuard; pair them with `agentFactory: bindAgentToPrincipal()`.
   */
  auth?: ParseAgentAuthOptions;
  /**
   * Maps an MCP request (after the transport checks and the host's guards, so `request.user` and
   * friends are set) to the options of the agent that serves it, e.g.
   * `(req) => ({ sessionToken: req.user.sessionToken })`. May be async. Throw
   * AgentUnauthorizedError to refuse (401); any other error answers 500. Required with `mcp`.
   */
  agentFactory?(
    request: McpRequest,
  ): AgentOptions | ParseAgent | Promise<AgentOptions | ParseAgent>;
}
