import type { RetrievalServices } from '../retrieval/retrieval-call';
import type { SchemaSource } from '../core/parse-schema';
import type { QueryCostLimits, PermissionLevel } from '../core/constants';
import type { DataRouter } from '../data/data-router';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import type { ModelClass } from '../metadata/metadata.types';
import type { ListFilterInput } from '../security/class-filter';
import type { Where } from '../query/constraint-translator';
import type { AnalyticsSettings, ProgressUpdate } from '../tools/tool-context';
import type { ToolRegistry } from '../tools/tool-registry';
import type { ToolProfileName } from '../tools/tool-profiles';
import type { AgentEvents } from '../core/agent-events';
import type { RateLimiter } from '../ports/rate-limiter';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import type { AskOptions, ConversationFactory, ConversationOptions } from '../ports/conversation';
import type { AgentHooks } from './agent-hooks';
import type { ImpersonateOptions } from './agent-impersonation';
import type { ApprovalOptions } from './agent-approval';
import type { PromptCanaryOptions } from './prompt-canaries';

/**
 * Every agent option except `parent` (which parse-agent.ts adds, as it names the ParseAgent class):
 * kept here so option resolution can read them without importing the agent.
 */
export interface AgentOwnOptions {
  /** Tool tier: readonly (default), write or admin. */
  permissions?: PermissionLevel;
  /** A Parse session token: Parse Server enforces that user's ACLs, CLPs and protectedFields. */
  sessionToken?: string;
  /** Scope reads to a user's ACL on the direct MongoDB path (needs `mongo` configured). */
  aclUser?: string | { objectId: string };
  /** Scope reads to a role's ACL on the direct MongoDB path (needs `mongo` configured). */
  aclRole?: string;
  /** The tenant this agent is bound to (read by @AgentTenantScope). */
  tenantId?: string;
  /**
   * Which tools the agent is offered, within its tier: a list (= only), `{ only, except }`, or the
   * name of a profile (`'lean'`, `'analytics'`, `'writes'`, `'full'`; see TOOL_PROFILES), which only
   * narrows. An unknown profile name throws.
   */
  tools?: ListFilterInput<string> | ToolProfileName;
  methods?: ListFilterInput<string>;
  classes?: ListFilterInput<string | ModelClass>;
  /** Per-class constraints ANDed into every read (`default` applies to every class). */
  filters?: Record<string, Where>;
  /** Sub-agent nesting budget of a root agent (a sub-agent gets its parent's minus one). */
  recursionDepth?: number;
  /** Shared limiter (e.g. Redis-backed); must implement the RateLimiter port (`check`). */
  rateLimiter?: RateLimiter;
  /**
   * This agent's own budget: at most `rateLimit` tool calls per `rateWindow` seconds, charged in
   * addition to the shared limiter. A sub-agent's may not exceed its parent's.
   */
  rateLimit?: number;
  /** Seconds of the agent's own window (default DEFAULT_RATE_WINDOW_SECONDS, 60). */
  rateWindow?: number;
  /**
   * Check the session token with Parse Server (`/users/me`, cached) when the agent is created, so
   * a bad token fails there (AgentUnauthorizedError) rather than on the first tool call. Needs an
   * async creation: `ParseAgentFactory.createValidated()`; `create()` refuses it.
   */
  validateSession?: boolean;
  /** Unknown names in `tools` throw instead of warning. */
  strictToolFilter?: boolean;
  /** Unknown names in `classes.only` throw instead of warning. */
  strictClassFilter?: boolean;
  correlationId?: string;
  /** Aborting it cancels the agent's in-flight and future calls. */
  signal?: AbortSignal;
  /**
   * Raw create/update/delete for this agent (besides PARSE_AGENT_ALLOW_WRITE_TOOLS and
   * PARSE_AGENT_ALLOW_RAW_CRUD). Default: true for master-key agents, false for session-token
   * (client mode) agents; a sub-agent cannot widen its parent's.
   */
  allowMutations?: boolean;
  /**
   * Destructive calls (delete_object, delete_class, admin agent methods) ask the person through
   * MCP elicitation first; a client that cannot ask is refused. Default true; false runs them
   * without asking when the client cannot ask.
   */
  confirmationRequired?: boolean;
  /**
   * @deprecated Changes nothing: get_schema always lists each agent method's accepted arguments
   * (`parameters`, `permitted_keys`), since call_method's refusal names them anyway.
   */
  agentDebug?: boolean;
  /**
   * Hooks run around this agent's tool calls and on its conversations' model responses (see
   * AgentHooks; `addHooks()` adds more later). A sub-agent's calls run its ancestors' hooks too.
   */
  hooks?: AgentHooks;
  /**
   * One audit log line per tool call a master-key agent makes (default true). Opt out for
   * operator tooling whose calls are audited elsewhere; a sub-agent cannot switch it off.
   */
  masterKeyAudit?: boolean;
  /** How many operations `operationLog` keeps, oldest dropped first (default 100; 0 keeps none). */
  maxLogSize?: number;
  /**
   * USD per million input tokens of the model that reads tool results: each successful tool-call
   * event then carries `est_cost_usd` (its result's estimated tokens at this price).
   */
  inputTokenCostPerMillion?: number;
  /**
   * Every row a read tool returns carries `_source: { class, tool, objectId }` (stamped after
   * projection and redaction), so an answer can cite where each row came from. Default false; a
   * sub-agent inherits its parent's unless it sets its own.
   */
  sourceProvenance?: boolean;
  /**
   * Act as this `_User` with a real session of theirs, so Parse Server applies that user's ACL,
   * CLP and protectedFields (see ImpersonateOptions). Only for a master-key agent, and only
   * through `ParseAgentFactory.createValidated()` (resolving the session is a round trip);
   * `agent.impersonate()` does the same on an existing agent.
   */
  impersonate?: ImpersonateOptions;
  /**
   * Which tiers need a person's approval before a call runs (`{ write: true, admin: true }`), and
   * how long to wait (`timeoutMs`). call_method counts at the tier its method declares. Asked
   * through MCP elicitation; without a way to ask, after a decline or once the time is up, the
   * call is refused. A sub-agent keeps its parent's tiers. Default: none.
   */
  confirm?: ApprovalOptions;
  /**
   * Strings or patterns that mark a prompt-injection attempt in data (see PromptCanaryOptions): a
   * tool result containing one emits a `prompt_injection` security event, and with
   * `action: 'refuse'` the call fails instead of handing the result to the model.
   */
  promptCanaries?: PromptCanaryOptions;
}

/** Shared services an agent runs on (one set per module / application). */
export interface AgentServices {
  /** Chooses the data path per operation and identity (fails closed). */
  data: DataRouter;
  schemas: SchemaSource;
  metadata: MetadataRegistry;
  tools: ToolRegistry;
  events: AgentEvents;
  /** Used when the agent has no rateLimiter of its own. */
  rateLimiter?: RateLimiter;
  /** refuseCollscan / exposeExplain (both off by default). */
  analytics?: Partial<AnalyticsSettings>;
  /** Cost caps for every where (DEFAULT_QUERY_COST_LIMITS where unset). */
  queryLimits?: Partial<QueryCostLimits>;
  warn?: (message: string) => void;
  /** Data-path operations slower than this (ms) are logged through `warn` (the slow-query log). */
  slowQueryMs?: number;
  /** Opens LLM conversations for `ask()` (the Nest module and the CLI supply the client's). */
  conversations?: ConversationFactory;
  /** Embeddings and spend cap for semantic_search (absent: it refuses, saying what to set). */
  retrieval?: RetrievalServices;
}

/** `ask()` options: the question's own (reset, signal) plus settings for a new conversation. */
export type AgentAskOptions = AskOptions & ConversationOptions;

/** How `describe()` answers: 'json' (default) an object, 'text' readable lines for operators. */
export interface DescribeOptions {
  format?: 'json' | 'text';
}

export interface ToolDefinitionsOptions {
  /** mcp (default): { name, description, inputSchema }; openai: function tools; anthropic: tool use. */
  format?: 'mcp' | 'openai' | 'anthropic';
  category?: string;
}

export interface ExecuteOptions {
  /** Cancels this one call. */
  signal?: AbortSignal;
  /** Receives the tool's progress reports for this call. */
  onProgress?: (update: ProgressUpdate) => void;
  /** Lets destructive tools ask the person (MCP elicitation) during this call. */
  elicitation?: ElicitationChannel;
}

/** What wouldPermit answers. */
export interface PermitDecision {
  allowed: boolean;
  reason?: string;
  denied_at?: string;
}
