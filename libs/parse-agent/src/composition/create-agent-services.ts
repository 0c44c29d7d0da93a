import type { AgentServices } from '../agent/parse-agent';
import type { ParseConnectionOptions, ParseRestClient } from '../data/parse-rest/parse-rest-client';
import type { ParseDatabaseKind } from '../data/parse-rest/parse-rest-data-path';
import type { ModelClass } from '../metadata/metadata.types';
import type { ConversationFactory } from '../ports/conversation';
import type { DataPathProvider, DataPathProvidersOption } from '../ports/data-path';
import type { LlmProvider } from '../ports/llm-provider';
import type { RateLimiter } from '../ports/rate-limiter';
import { composeAgentServices } from './compose-agent-services';
import type { DataPathOptions } from './data-paths';

/**
 * The built-in database paths' options come from their descriptors: `postgres` (Parse-on-PostgreSQL,
 * the `pg` package) and `mongo` (Parse-on-MongoDB, the `mongodb` package), each loaded on first
 * use; a pool or client made from `uri` is closed by `close()`.
 */
export interface CreateAgentServicesOptions extends DataPathOptions {
  parse: ParseConnectionOptions & {
    /** What Parse Server runs on; only `'mongo'` sends master-key pipelines to REST /aggregate. */
    database?: ParseDatabaseKind;
  };
  models?: ModelClass[];
  /** Classes to hide by name, for classes without a model. */
  hiddenClasses?: Array<string | { className: string; except?: 'masterKey' }>;
  /** Default: an in-process sliding window per identity (60 calls per 60 s). */
  rateLimiter?: RateLimiter;
  /** How long Parse schemas are cached (ms, default 30 000). */
  schemaCacheTtlMs?: number;
  /** Direct database paths tried alongside Parse REST (see DataRouter). */
  dataPaths?: DataPathProvider[];
  /**
   * Replaces the library's data paths (a list), or derives the list from them (a function); see
   * `ParseAgentModule.forRoot`'s option of the same name. `dataPaths` are added after it.
   */
  dataPathProviders?: DataPathProvidersOption;
  /** The model behind `agent.ask()`, when `conversations` is not given. */
  llmProvider?: LlmProvider;
  /** Lets `agent.ask()` open conversations (e.g. the client's `conversationFactory()`). */
  conversations?: ConversationFactory;
  /** Data-path operations slower than this (ms) are logged through `warn` as SLOW lines. */
  slowQueryThresholdMs?: number;
  warn?: (message: string) => void;
}

export interface StandaloneAgentServices {
  services: AgentServices;
  parse: ParseRestClient;
  /**
   * Releases the keep-alive sockets to Parse Server and the database connections opened here, so
   * the process can exit. An application's own pool or client is left open.
   */
  close(): Promise<void>;
}

/**
 * The services agents run on, built without Nest: for scripts and other hosts. The same root as
 * the Nest module's builds them (`composeAgentServices`); without `conversations` or
 * `llmProvider`, agents here hold no conversations.
 */
export function createAgentServices(options: CreateAgentServicesOptions): StandaloneAgentServices {
  const { dataPaths, dataPathProviders, conversations, llmProvider, warn, ...rest } = options;
  let paths = dataPathProviders;
  if (dataPaths?.length) {
    paths = Array.isArray(dataPathProviders)
      ? [...dataPathProviders, ...dataPaths]
      : (defaults) => [
          ...(dataPathProviders ? dataPathProviders(defaults) : defaults),
          ...dataPaths,
        ];
  }
  const built = composeAgentServices(
    {
      ...rest,
      dataPathProviders: paths,
      llmProvider,
      conversations: conversations ?? (llmProvider ? undefined : null),
    },
    { warn },
  );
  return { services: built.services, parse: built.parse, close: built.close };
}
