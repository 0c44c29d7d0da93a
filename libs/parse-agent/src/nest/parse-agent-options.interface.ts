import type { AgentOptions, ParseAgent } from '../agent/parse-agent';
import type { LlmProviderOptions } from '../ports/conversation';
import type { LlmProvider } from '../ports/llm-provider';
import type { RateLimiter } from '../ports/rate-limiter';
import type { ModelClass } from '../metadata/metadata.types';
import type { McpRequest } from '../transport/http/mcp-request-gate';

export interface ParseConnectionConfig {
  /** e.g. https://api.example.com/parse */
  serverURL: string;
  appId: string;
  /** Used for schema reads and master-key agents. */
  masterKey: string;
  javascriptKey?: string;
}

export interface MongoConnectionConfig {
  uri?: string;
  /** An existing MongoClient (from the mongodb driver). */
  client?: unknown;
  dbName?: string;
}

/** Defaults applied to every agent ParseAgentFactory creates (per-call options win). */
export type AgentDefaults = Omit<
  AgentOptions,
  'parent' | 'signal' | 'sessionToken' | 'aclUser' | 'aclRole'
>;

export interface ParseAgentModuleOptions {
  parse: ParseConnectionConfig;
  mongo?: MongoConnectionConfig;
  /** Models to register (feature modules can add theirs with ParseAgentModule.forFeature). */
  models?: ModelClass[];
  /** Classes to hide by name, for classes without a model. */
  hiddenClasses?: Array<string | { className: string; except?: 'masterKey' }>;
  defaults?: AgentDefaults;
  /** Shared by all agents; defaults to an in-process sliding window per identity (60 per 60 s). */
  rateLimiter?: RateLimiter;
  /** How long Parse schemas are cached (ms, default 30 000). */
  schemaCacheTtlMs?: number;
  /**
   * The language model behind `agent.ask()` and `ParseAgentFactory.conversation()`: an LlmProvider
   * or provider options. Default: LLM_PROVIDER, LLM_API_KEY, LLM_MODEL and LLM_BASE_URL from the
   * environment when LLM_PROVIDER is set, else none (conversations then explain how to set one).
   */
  llm?: LlmProvider | LlmProviderOptions;
  /** Silence the master-key and unhide banners (a deliberate global master-key deployment). */
  suppressSecurityBanners?: boolean;
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
