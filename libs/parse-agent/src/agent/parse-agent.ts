import { createHash, randomUUID } from 'node:crypto';
import { Subject, type Observable } from 'rxjs';
import { linkedAbort, type LinkedAbort } from '../core/linked-abort';
import { raceAbort } from '../core/race-abort';
import type { SchemaSource } from '../core/parse-schema';
import type { DataRouter } from '../data/data-router';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import type { ModelClass } from '../metadata/metadata.types';
import {
  normalizeListFilter,
  passesListFilter,
  type ListFilterInput,
  type NormalizedListFilter,
} from '../security/class-filter';
import { validateWhere, type Where } from '../query/constraint-translator';
import { andWhere } from '../query/where-composer';
import { isPlainObject } from '../query/field-names';
import { ENV_GATES, envGateRefusal } from '../tools/env-gates';
import {
  DEFAULT_ANALYTICS_SETTINGS,
  type AnalyticsSettings,
  type ConfirmationRequest,
  type MutationAuditInput,
  type ToolContext,
  type ProgressUpdate,
  type ToolAgent,
} from '../tools/tool-context';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import type { DataOperation } from '../ports/data-path';
import {
  describeAgentMethods,
  findAgentMethod,
  methodDenial,
} from '../tools/builtin/mutation/agent-method-gate';
import { timeoutOf, type ToolDefinition } from '../tools/tool-definition';
import { unknownToolError } from '../tools/unknown-tool';
import { PERMISSION_LEVELS } from '../tools/tool-tiers';
import type { ToolRegistry } from '../tools/tool-registry';
import { ReadPolicy } from '../security/read-policy';
import type { AgentEvents, MutationEvent } from '../core/agent-events';
import type { AgentIdentity, AuthType } from '../core/agent-identity';
import {
  CORRELATION_ID_PATTERN,
  DEFAULT_RECURSION_DEPTH,
  isPermissionLevel,
  MAX_CORRELATION_ID_LENGTH,
  PERMISSION_HIERARCHY,
  type PermissionLevel,
  type QueryCostLimits,
} from '../core/constants';
import { failure, failureFromError, success, type ToolEnvelope } from '../core/envelope';
import {
  AccessDeniedError,
  AgentCancelledError,
  AgentUnauthorizedError,
  AgentValidationError,
  ParseAgentConfigError,
  ParseAgentError,
  PermissionDeniedError,
  RecursionLimitExceededError,
  ToolFilteredError,
  ToolTimeoutError,
  UnknownToolError,
} from '../core/errors';
import { SlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import { checkRateLimit, isRateLimiter, type RateLimiter } from '../ports/rate-limiter';
import type {
  AgentConversation,
  AskOptions,
  ConversationAnswer,
  ConversationFactory,
  ConversationOptions,
} from '../ports/conversation';
import { buildToolCallEvent } from './tool-call-audit';
import {
  assertSubAgentIdentity,
  assertSubAgentSwitches,
  buildOwnRateWindows,
  intersectListFilters,
} from './agent-options-parent';
import { securityBanner } from '../core/security-banner';

export interface AgentOptions {
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
  tools?: ListFilterInput<string>;
  methods?: ListFilterInput<string>;
  classes?: ListFilterInput<string | ModelClass>;
  /** Per-class constraints ANDed into every read (`default` applies to every class). */
  filters?: Record<string, Where>;
  /**
   * Makes this agent a sub-agent of `parent` (see `subAgent()`): it keeps the parent's identity
   * and can only narrow what the parent may do.
   */
  parent?: ParseAgent;
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
  /** get_schema discloses agent methods' permittedKeys (trusted environments only). */
  agentDebug?: boolean;
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
  /** Opens LLM conversations for `ask()` (the Nest module and the CLI supply the client's). */
  conversations?: ConversationFactory;
}

/** `ask()` options: the question's own (reset, signal) plus settings for a new conversation. */
export type AgentAskOptions = AskOptions & ConversationOptions;

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

/**
 * An agent acting for one principal (a user session or the master key), limited to a permission
 * tier, tool and class filters, per-class filters and a tenant. `execute()` never throws for tool
 * failures: it resolves to the wire envelope.
 */
export class ParseAgent implements AgentIdentity, ToolAgent {
  readonly agentId = randomUUID();
  readonly permissions: PermissionLevel;
  readonly sessionToken?: string;
  readonly aclRole?: string;
  readonly aclUser?: string;
  readonly tenantId?: string;
  readonly authType: AuthType;
  readonly agentDepth: number;
  readonly recursionDepth: number;
  readonly parentAgentId?: string;
  readonly access: ReadPolicy;
  readonly allowMutations: boolean;
  readonly confirmationRequired: boolean;
  readonly agentDebug: boolean;
  protected readonly strictModes: { toolFilter: boolean; classFilter: boolean };
  protected readonly toolFilter?: NormalizedListFilter;
  protected readonly methodFilter?: NormalizedListFilter;
  /** The method filters of this sub-agent's ancestors: a call must pass each of them too. */
  protected readonly inheritedMethodFilters: readonly NormalizedListFilter[];
  protected readonly classFilter?: NormalizedListFilter;
  protected readonly filters: Readonly<Record<string, Where>>;
  protected readonly rateLimiter: RateLimiter;
  /** Per-agent windows (this agent's and its ancestors'), charged after the shared limiter. */
  protected readonly ownRateWindows: readonly SlidingWindowRateLimiter[];
  /** The parent of a sub-agent: its progress reaches the parent's stream too. */
  protected readonly parentAgent?: ParseAgent;
  /** Created on first use: many agents (one per MCP request) never need one. */
  protected abortController?: AbortController;
  /** Calls in flight, so cancel() reaches them without every call creating the agent's signal. */
  protected running?: Set<LinkedAbort>;
  protected readonly progressSubject = new Subject<ProgressUpdate>();
  protected currentProgress?: (update: ProgressUpdate) => void;
  protected correlation?: string;
  /** The conversation `ask()` continues with `reset: false`. */
  protected askConversation?: AgentConversation;
  /** Which data operations a configured path serves for this identity (see dataReachable). */
  protected servedOperations?: Map<DataOperation, boolean>;

  /** Tool progress reported during calls (the MCP layer forwards it as notifications). */
  readonly progress$: Observable<ProgressUpdate> = this.progressSubject.asObservable();

  constructor(
    options: AgentOptions,
    protected readonly services: AgentServices,
  ) {
    const parent = options.parent;
    if (options.validateSession === true) {
      throw new ParseAgentConfigError(
        'validateSession: true checks the session token with Parse Server before the agent exists; create it with `await parseAgentFactory.createValidated(options)` instead of create() or new ParseAgent().',
      );
    }
    const permissions = options.permissions ?? 'readonly';
    if (!isPermissionLevel(permissions)) {
      throw new ParseAgentConfigError(
        `permissions must be one of readonly, write, admin (got ${JSON.stringify(permissions)}).`,
      );
    }
    if (parent && PERMISSION_HIERARCHY[permissions] > PERMISSION_HIERARCHY[parent.permissions]) {
      throw new ParseAgentConfigError(
        `A sub-agent cannot have more permissions (${permissions}) than its parent (${parent.permissions}).`,
      );
    }
    this.permissions = permissions;

    if (options.sessionToken !== undefined && typeof options.sessionToken !== 'string') {
      throw new ParseAgentConfigError('sessionToken must be a string.');
    }
    const aclUser: unknown =
      typeof options.aclUser === 'object' && options.aclUser !== null
        ? options.aclUser.objectId
        : options.aclUser;
    if (
      (typeof options.aclUser === 'object' && options.aclUser !== null && !aclUser) ||
      (aclUser !== undefined && aclUser !== null && typeof aclUser !== 'string')
    ) {
      throw new ParseAgentConfigError(
        'aclUser must be a user objectId (a string) or { objectId: string }.',
      );
    }
    if (options.aclRole !== undefined && options.aclRole !== null) {
      if (typeof options.aclRole !== 'string')
        throw new ParseAgentConfigError('aclRole must be a role name (a string).');
    }
    // Empty values are unset: they must not turn a scoped agent into a master-key one.
    const own = {
      sessionToken: options.sessionToken || undefined,
      aclUser: (aclUser as string | undefined) || undefined,
      aclRole: options.aclRole || undefined,
    };
    const identities = Object.entries(own)
      .filter(([, value]) => value !== undefined)
      .map(([key]) => key);
    if (identities.length > 1) {
      throw new ParseAgentConfigError(`Pass only one identity; got ${identities.join(' and ')}.`);
    }
    // A sub-agent that names no identity inherits its parent's; one that names one may only
    // name its parent's (a master-key parent may hand down any).
    const identity =
      parent && identities.length === 0
        ? { sessionToken: parent.sessionToken, aclUser: parent.aclUser, aclRole: parent.aclRole }
        : own;
    if (parent) assertSubAgentIdentity(parent, identity);
    this.sessionToken = identity.sessionToken;
    this.aclUser = identity.aclUser;
    this.aclRole = identity.aclRole;
    this.authType = this.sessionToken
      ? 'session_token'
      : this.aclUser
        ? 'acl_user'
        : this.aclRole
          ? 'acl_role'
          : 'master_key';
    if ((this.aclUser || this.aclRole) && !services.data.serves('find', this)) {
      throw new ParseAgentConfigError(
        'aclUser and aclRole scopes are enforced on a direct database path; configure `mongo` or `postgres` in ParseAgentModule.forRoot, or use sessionToken.',
      );
    }

    if (
      options.tenantId !== undefined &&
      options.tenantId !== null &&
      typeof options.tenantId !== 'string'
    ) {
      throw new ParseAgentConfigError('tenantId must be a string.');
    }
    this.tenantId = options.tenantId || parent?.tenantId || undefined;
    if (parent?.tenantId && this.tenantId !== parent.tenantId) {
      throw new ParseAgentConfigError('A sub-agent cannot change its parent’s tenant.');
    }

    if (parent) {
      if (parent.recursionDepth - 1 < 0) throw new RecursionLimitExceededError(parent.agentDepth);
      if (options.recursionDepth !== undefined) {
        this.warn(
          `recursionDepth is ignored for a sub-agent: it gets its parent's budget minus one (${parent.recursionDepth - 1}).`,
        );
      }
      this.recursionDepth = parent.recursionDepth - 1;
      this.agentDepth = parent.agentDepth + 1;
      this.parentAgentId = parent.agentId;
    } else {
      this.recursionDepth = options.recursionDepth ?? DEFAULT_RECURSION_DEPTH;
      this.agentDepth = 0;
    }

    this.toolFilter = normalizeListFilter(options.tools, 'tools', (t) => [String(t)]);
    if (this.toolFilter) {
      const known = new Set([
        ...services.tools.list().map((t) => t.name),
        ...PERMISSION_LEVELS.admin,
      ]);
      const unknown = [...(this.toolFilter.only ?? []), ...this.toolFilter.except].filter(
        (t) => !known.has(t),
      );
      if (unknown.length) {
        const message = `tools filter names unknown tool(s): ${unknown.join(', ')}.`;
        if (options.strictToolFilter) throw new ParseAgentConfigError(message);
        this.warn(message);
      }
    }
    if (parent?.toolFilter)
      this.toolFilter = intersectListFilters(parent.toolFilter, this.toolFilter, 'tools');
    // Method names may be bare or Class-qualified, so a sub-agent keeps its ancestors' method
    // filters and must pass every one of them as well as its own.
    const ownMethods = normalizeListFilter(options.methods, 'methods', (m) => [String(m)]);
    this.inheritedMethodFilters = parent
      ? [...parent.inheritedMethodFilters, ...(parent.methodFilter ? [parent.methodFilter] : [])]
      : [];
    this.methodFilter = ownMethods ?? parent?.methodFilter;
    const classNames = (c: string | ModelClass) => {
      if (typeof c === 'string') return [c];
      const name = services.metadata.resolveClassName(c);
      return services.metadata.nameVariants(name);
    };
    this.classFilter = normalizeListFilter(options.classes, 'classes', classNames);
    // Only this agent's own `only` names are checked (a parent's were checked, and warned about,
    // when it was built). A class may be registered later, so an unknown name warns unless strict;
    // `except` is never checked, as blocking a class before it exists is legitimate.
    if (this.classFilter?.only) {
      // Every spelling of a registered class (the filter holds all of a model's variants).
      const registered = new Set(
        services.metadata.all().flatMap((m) => services.metadata.nameVariants(m.className)),
      );
      const unknown = [...this.classFilter.only].filter(
        (c) => !registered.has(c) && !c.startsWith('_'),
      );
      if (unknown.length) {
        const message = `classes filter names unregistered class(es): ${unknown.join(', ')}.`;
        if (options.strictClassFilter) throw new ParseAgentConfigError(message);
        this.warn(`${message} They match nothing until a model declares them.`);
      }
    }
    if (parent?.classFilter)
      this.classFilter = intersectListFilters(parent.classFilter, this.classFilter, 'classes');

    this.filters = Object.freeze(this.buildFilters(options.filters, parent));
    const parentAllows = parent ? parent.allowMutations : true;
    if (options.allowMutations === true && !parentAllows) {
      throw new ParseAgentConfigError(
        'A sub-agent cannot set allowMutations: true when its parent does not allow mutations; omit it to inherit.',
      );
    }
    this.allowMutations =
      options.allowMutations === undefined
        ? parent
          ? parentAllows
          : this.authType === 'master_key'
        : options.allowMutations === true;
    if (parent) assertSubAgentSwitches(parent, options);
    this.confirmationRequired =
      options.confirmationRequired ?? parent?.confirmationRequired ?? true;
    this.agentDebug = options.agentDebug ?? parent?.agentDebug ?? false;
    this.strictModes = {
      toolFilter: options.strictToolFilter === true,
      classFilter: options.strictClassFilter === true,
    };
    if (options.rateLimiter !== undefined && !isRateLimiter(options.rateLimiter)) {
      throw new ParseAgentConfigError(
        'rateLimiter must implement the RateLimiter port: an object with a check(key) method that throws RateLimitExceededError when over the limit.',
      );
    }
    this.ownRateWindows = buildOwnRateWindows(
      options,
      parent && { windows: parent.ownRateWindows, sharedLimit: parent.rateLimiter.limit },
    );
    this.parentAgent = parent;
    this.rateLimiter =
      options.rateLimiter ??
      parent?.rateLimiter ??
      services.rateLimiter ??
      new SlidingWindowRateLimiter();
    this.correlationId = options.correlationId ?? parent?.correlationId;

    for (const signal of [options.signal, parent?.signal]) {
      if (!signal) continue;
      if (signal.aborted) this.controller.abort(signal.reason);
      else
        signal.addEventListener('abort', () => this.controller.abort(signal.reason), {
          once: true,
        });
    }

    this.access = new ReadPolicy(
      this,
      services.metadata,
      services.schemas,
      this.classFilter,
      this.filters,
      services.queryLimits,
    );

    if (this.authType === 'master_key' && !parent) {
      securityBanner(
        'master-key-agent',
        'An agent without a session token runs with the master key: Parse ACLs and CLPs do not apply. Hidden classes, @AgentFields, canonical filters and tenant scopes are the only limits. Pass sessionToken to scope an agent to a user, or call suppressSecurityBanners() if this is intended.',
      );
    }
  }

  get usingMasterKey(): boolean {
    return this.authType === 'master_key';
  }

  /**
   * A session-token agent: everything it does runs as that user through Parse REST, never with
   * the master key. Tools that need the master key (schema changes) are beyond its ceiling.
   */
  get clientMode(): boolean {
    return this.authType === 'session_token';
  }

  /** Whether this agent's tier reaches `required` (tiers are cumulative). */
  tierReaches(required: PermissionLevel): boolean {
    return PERMISSION_HIERARCHY[required] <= PERMISSION_HIERARCHY[this.permissions];
  }

  /** The per-agent `methods:` filter: bare names match on any class, `Class.method` on one. */
  methodPermitted(className: string, methodName: string): boolean {
    const names = [
      methodName,
      ...this.services.metadata.nameVariants(className).map((c) => `${c}.${methodName}`),
    ];
    return (
      passesListFilter(this.methodFilter, names) &&
      this.inheritedMethodFilters.every((filter) => passesListFilter(filter, names))
    );
  }

  /** Aborted when the agent is cancelled; pass it to long work in custom tools. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get cancelled(): boolean {
    return this.abortController?.signal.aborted ?? false;
  }

  /** Cancels in-flight and future calls of this agent. */
  cancel(reason?: string): void {
    if (this.controller.signal.aborted) return;
    const error = new AgentCancelledError(reason);
    this.controller.abort(error);
    for (const call of this.running ?? []) call.abort(error);
  }

  protected get controller(): AbortController {
    this.abortController ??= new AbortController();
    return this.abortController;
  }

  get correlationId(): string | undefined {
    return this.correlation;
  }

  /** Accepts `[A-Za-z0-9._-]`, at most 128 characters; anything else is ignored. */
  set correlationId(value: string | undefined) {
    if (value === undefined || value === null || value === '') {
      this.correlation = undefined;
      return;
    }
    if (typeof value !== 'string' || !CORRELATION_ID_PATTERN.test(value)) return;
    this.correlation = value.slice(0, MAX_CORRELATION_ID_LENGTH);
  }

  protected buildFilters(
    input: AgentOptions['filters'],
    parent?: ParseAgent,
  ): Record<string, Where> {
    const out: Record<string, Where> = { ...(parent?.filters ?? {}) };
    if (input === undefined || input === null) return out;
    if (!isPlainObject(input))
      throw new ParseAgentConfigError('filters must be an object of { ClassName: where }.');
    for (const [key, where] of Object.entries(input)) {
      if (!isPlainObject(where))
        throw new ParseAgentConfigError(`filters.${key} must be a where object.`);
      try {
        validateWhere(where);
      } catch (error) {
        if (error instanceof ParseAgentError)
          throw new ParseAgentConfigError(
            `filters.${key} is not a valid constraint: ${error.message}`,
          );
        throw error;
      }
      out[key] = andWhere(parent?.filters[key], where);
    }
    return out;
  }

  /**
   * Creates a sub-agent, one level deeper: the parent's identity (only a master-key parent may
   * hand down another), and the same or narrower permissions, tools, methods, classes, filters,
   * tenant and switches. Anything wider throws at construction.
   */
  subAgent(options: Omit<AgentOptions, 'parent'> = {}): ParseAgent {
    return new ParseAgent({ ...options, parent: this }, this.services);
  }

  /**
   * Tools this agent may call: tier tools and registered tools at or below its tier, minus
   * filters, then (client mode) minus tools that need the master key, and raw CRUD tools unless
   * allowMutations. No step widens what the previous one allowed.
   */
  allowedTools(): string[] {
    return this.services.tools
      .list()
      .filter((t) => this.permitsTool(t) && this.dataReachable(t))
      .map((t) => t.name);
  }

  /**
   * Whether a configured data path serves the tool's data operation for this agent: a tool that
   * could only fail (aggregate for a session agent with Parse REST alone) is not offered. Asked
   * once per operation for this agent's identity; a call anyway still gets the router's refusal.
   */
  protected dataReachable(tool: ToolDefinition): boolean {
    const operation = tool.dataOperation;
    if (!operation) return true;
    const served = (this.servedOperations ??= new Map());
    let answer = served.get(operation);
    if (answer === undefined) {
      answer = this.services.data.serves(operation, this);
      served.set(operation, answer);
    }
    return answer;
  }

  /** One tool through the gates of allowedTools() (a call checks only the tool it runs). */
  protected permitsTool(tool: ToolDefinition): boolean {
    return (
      PERMISSION_HIERARCHY[tool.permission] <= PERMISSION_HIERARCHY[this.permissions] &&
      passesListFilter(this.toolFilter, [tool.name]) &&
      !this.clientCeilingRefusal(tool)
    );
  }

  /** Why a tool is beyond this agent's client-mode ceiling, or undefined. */
  protected clientCeilingRefusal(tool: ToolDefinition): string | undefined {
    if (!this.clientMode) return undefined;
    if (tool.clientSafe === false) {
      return `Tool '${tool.name}' is not available to session-token (client mode) agents: it needs the master key. Use a master-key agent for it.`;
    }
    if (tool.envGate === 'rawCrud' && !this.allowMutations) {
      return `Raw mutation tool '${tool.name}' is disabled for this session-token (client mode) agent. Create the agent with allowMutations: true to enable it; ${ENV_GATES.writeTools} and ${ENV_GATES.rawCrud} must also be set on the server.`;
    }
    return undefined;
  }

  /** Definitions of the allowed tools, in MCP shape or an LLM provider's. */
  toolDefinitions(
    options: ToolDefinitionsOptions = {},
  ): Array<ToolDefinition & Record<string, unknown>> {
    const allowed = new Set(this.allowedTools());
    const wanted = options.category?.toLowerCase();
    const tools = this.services.tools
      .list()
      .filter((t) => allowed.has(t.name))
      .filter((t) => !wanted || t.category.toLowerCase() === wanted);
    if (options.format === 'openai') {
      return tools.map((t) => ({
        ...t,
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.inputSchema },
      }));
    }
    if (options.format === 'anthropic') {
      return tools.map((t) => ({ ...t, input_schema: t.inputSchema }));
    }
    return tools as Array<ToolDefinition & Record<string, unknown>>;
  }

  /**
   * Would this agent be allowed to run the tool (on the class, the agent method)? Walks the same
   * gates as a call, in the same order, without I/O or side effects. `reason` uses the audit
   * vocabulary (unknown_tool, permission_denied, tool_filtered, access_denied, hidden_class,
   * class_filter, tenant_scope, unknown_method, invalid_configuration when no configured data path
   * serves the tool for this agent); `denied_at` names the gate.
   */
  wouldPermit(
    toolName: string,
    options: { className?: string | ModelClass; methodName?: string } = {},
  ): PermitDecision {
    const tool = this.services.tools.get(toolName);
    if (!tool || !this.permitsTool(tool)) {
      const refusal = this.refusal(toolName, tool);
      if (refusal instanceof ToolFilteredError)
        return { allowed: false, reason: 'tool_filtered', denied_at: 'allowed_tools' };
      if (refusal instanceof AccessDeniedError)
        return { allowed: false, reason: 'access_denied', denied_at: 'client_mode_ceiling' };
      if (refusal instanceof UnknownToolError)
        return { allowed: false, reason: 'unknown_tool', denied_at: 'tool_registry' };
      return { allowed: false, reason: 'permission_denied', denied_at: 'permission_tier' };
    }
    if (envGateRefusal(tool, this.allowMutations))
      return { allowed: false, reason: 'access_denied', denied_at: 'env_gate' };
    if (!this.dataReachable(tool))
      return { allowed: false, reason: 'invalid_configuration', denied_at: 'data_path' };
    if (options.className === undefined) return { allowed: true };
    const className = this.services.metadata.resolveClassName(options.className);
    try {
      this.access.assertClassAccessible(className);
    } catch (error) {
      const kind = error instanceof AccessDeniedError ? error.kind : undefined;
      return {
        allowed: false,
        reason: kind ?? 'access_denied',
        denied_at: 'assert_class_accessible',
      };
    }
    try {
      this.access.tenant(className);
    } catch {
      return { allowed: false, reason: 'tenant_scope', denied_at: 'tenant_scope' };
    }
    if (options.methodName !== undefined) {
      const method = findAgentMethod(this.access, className, options.methodName);
      if (!method)
        return { allowed: false, reason: 'unknown_method', denied_at: 'declared_methods' };
      const denial = methodDenial(this, className, method);
      if (denial) return { allowed: false, reason: denial.reason, denied_at: denial.deniedAt };
    }
    return { allowed: true };
  }

  /** The per-agent filter this agent applies to a class (its own entry ANDed with `default`). */
  filterFor(cls: string | ModelClass): Where | undefined {
    return this.access.filterFor(this.services.metadata.resolveClassName(cls));
  }

  /**
   * Every layer that gates this agent, for operators (never sent to the model): identity (a
   * session token shows only as a fingerprint), tier, tenant, class/tool/method filters with the
   * effective lists, per-agent filters by field name (values stay out), hidden classes, a summary
   * per registered class, strict modes and the correlation id.
   */
  describe(): Record<string, unknown> {
    const perClass: Record<string, unknown> = {};
    for (const meta of this.services.metadata.all()) {
      const entry = this.describeFor(meta.className);
      perClass[meta.className] = {
        accessible: entry.accessible,
        ...(entry.reason ? { reason: entry.reason } : {}),
        agent_methods: entry.agent_methods,
      };
    }
    return {
      agent_id: this.agentId,
      permissions: this.permissions,
      auth: {
        mode: this.authType,
        ...(this.sessionToken ? { fingerprint: tokenFingerprint(this.sessionToken) } : {}),
      },
      // Kept from the earlier shape: dashboards read them.
      auth_type: this.authType,
      using_master_key: this.usingMasterKey,
      client_mode: this.clientMode,
      allow_mutations: this.allowMutations,
      confirmation_required: this.confirmationRequired,
      tenant_id: this.tenantId ?? null,
      agent_depth: this.agentDepth,
      allowed_tools: this.allowedTools(),
      classes: filterSummary(this.classFilter),
      tools: { ...filterSummary(this.toolFilter), effective: this.allowedTools() },
      methods: filterSummary(this.methodFilter),
      filters: Object.fromEntries(
        Object.entries(this.filters).map(([k, w]) => [k, Object.keys(w).sort()]),
      ),
      hidden_classes: this.services.metadata
        .hiddenClassNames()
        .filter((c) => this.services.metadata.isHidden(c, this.usingMasterKey))
        .sort(),
      per_class: perClass,
      strict_modes: {
        tool_filter: this.strictModes.toolFilter,
        class_filter: this.strictModes.classFilter,
      },
      correlation_id: this.correlationId ?? null,
    };
  }

  /** What this agent sees of one class: access, tenant binding, allowlist, filters. */
  describeFor(cls: string | ModelClass): Record<string, unknown> {
    const className = this.services.metadata.resolveClassName(cls);
    const meta = this.services.metadata.get(className);
    let accessible = true;
    let reason: string | undefined;
    try {
      this.access.assertClassAccessible(className);
    } catch (error) {
      accessible = false;
      reason = (error as Error).message;
    }
    let tenant: unknown = null;
    try {
      tenant = this.access.tenant(className) ?? null;
    } catch (error) {
      reason ??= (error as Error).message;
      accessible = false;
    }
    const filter = this.filterFor(className) ?? null;
    return {
      class_name: className,
      accessible: accessible ? 'permitted' : 'denied',
      ...(reason ? { reason } : {}),
      tenant_scope: tenant,
      agent_fields: meta?.fields ?? null,
      agent_canonical_filter: meta?.canonicalFilter ?? null,
      per_agent_filter: filter,
      large_fields: meta?.largeFields ?? [],
      agent_methods: accessible
        ? describeAgentMethods(this, this.access, className).map((m) => m.name as string)
        : [],
    };
  }

  /**
   * Opens a conversation in which a language model answers questions with this agent's tools,
   * under this agent's identity and limits. Needs a conversation factory in the services
   * (ParseAgentFactory and the CLI provide one).
   */
  conversation(options: ConversationOptions = {}): AgentConversation {
    if (!this.services.conversations) {
      throw new ParseAgentConfigError(
        'This agent cannot hold a conversation: its services have no conversation factory. Create agents with ParseAgentFactory (Nest) or createAgentServices({ conversations: conversationFactory() }), then configure an LLM provider (LLM_PROVIDER, LLM_API_KEY, LLM_MODEL, LLM_BASE_URL).',
      );
    }
    return this.services.conversations(this, options);
  }

  /**
   * Asks a language model a question it answers with this agent's tools. Starts a fresh history
   * unless `reset: false`, which continues the agent's previous question. Conversation settings
   * (`llm`, `maxIterations`, ...) open a new conversation, so they cannot be combined with
   * `reset: false`.
   */
  ask(question: string, options: AgentAskOptions = {}): Promise<ConversationAnswer> {
    const { reset = true, signal, ...settings } = options;
    const named = Object.entries(settings)
      .filter(([, value]) => value !== undefined)
      .map(([key]) => key);
    const hasSettings = named.length > 0;
    if (!reset && hasSettings) {
      return Promise.reject(
        new ParseAgentConfigError(
          `ask(..., { reset: false }) continues the current conversation, whose settings are fixed; drop ${named.join(', ')} or start a new conversation (reset: true, or agent.conversation(settings)).`,
        ),
      );
    }
    try {
      if (!this.askConversation || hasSettings) this.askConversation = this.conversation(settings);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.askConversation.ask(question, { reset, signal });
  }

  /** Called by tools (built-in or custom) to report progress of the current call. */
  reportProgress(update: ProgressUpdate): void {
    if (!Number.isFinite(update.progress)) return;
    this.currentProgress?.(update);
    this.progressSubject.next(update);
    // A sub-agent works for its parent's call: its progress is that call's progress too.
    this.parentAgent?.reportProgress(update);
  }

  /**
   * Runs a tool and resolves to the wire envelope; never rejects for tool failures. Only an
   * AgentUnauthorizedError raised by a tool propagates (the transport answers 401).
   */
  /**
   * Charges one request to this principal's rate limit; throws RateLimitExceededError when over.
   * `execute()` charges every tool call; the MCP transport charges the other methods that cost
   * work (initialize, listings), so no method is a free way to load the server.
   */
  async consumeRateLimit(): Promise<void> {
    await checkRateLimit(this.rateLimiter, this.rateLimitKey(), (error) =>
      this.warn(
        `rate limiter failure: ${(error as Error)?.name ?? 'Error'}: ${(error as Error)?.message ?? String(error)}`,
      ),
    );
    // In-process windows: synchronous, and usually none at all.
    for (const window of this.ownRateWindows) window.check();
  }

  async execute(
    toolName: string,
    args: Record<string, unknown> = {},
    options: ExecuteOptions = {},
  ): Promise<ToolEnvelope> {
    try {
      await this.consumeRateLimit();
    } catch (error) {
      return failureFromError(error, toolName);
    }
    const tool = this.services.tools.get(toolName);
    const refusal = this.refusal(toolName, tool);
    if (refusal) return failureFromError(refusal, toolName);
    const gate = envGateRefusal(tool!, this.allowMutations);
    if (gate) return failure(gate, 'access_denied');
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return failureFromError(
        new AgentValidationError('arguments must be a JSON object.'),
        toolName,
      );
    }
    const invalid = this.services.tools.validate(toolName, args);
    if (invalid) return failureFromError(new AgentValidationError(invalid), toolName);

    // The agent's own signal exists only once something asked for it or cancelled the agent;
    // cancel() also reaches calls in flight through `running`.
    const own = this.abortController?.signal;
    if (own?.aborted || options.signal?.aborted) {
      return failureFromError(abortError([own, options.signal]), toolName);
    }

    const started = Date.now();
    const seconds = timeoutOf(tool!);
    const call = linkedAbort([own, options.signal]);
    const running = (this.running ??= new Set());
    running.add(call);
    const timer = setTimeout(
      () => call.abort(new ToolTimeoutError(toolName, seconds)),
      seconds * 1000,
    );
    const signal = call.signal;
    const router = this.services.data;
    let readPath: ToolContext['data'] | undefined;
    let writePath: ToolContext['data'] | undefined;
    let confirmed: boolean | undefined;
    const context: ToolContext = {
      agent: this,
      access: this.access,
      // Bound on first use: tools that read no data never resolve a path.
      get data() {
        return (readPath ??= router.pathFor('find', this.agent));
      },
      get writeData() {
        return (writePath ??= router.pathFor('write', this.agent));
      },
      dataFor: (operation) => router.pathFor(operation, this),
      timeoutMs: seconds * 1000,
      analytics: { ...DEFAULT_ANALYTICS_SETTINGS, ...this.services.analytics },
      signal,
      reportProgress: (u) => this.reportProgress(u),
      confirm: async (request) => {
        const outcome = await this.confirm(request, options.elicitation, signal);
        confirmed = outcome.confirmed;
        return outcome;
      },
      audit: (input) => this.emitMutation(toolName, input, confirmed),
    };
    const previousProgress = this.currentProgress;
    this.currentProgress = options.onProgress;
    let envelope: ToolEnvelope;
    try {
      const data = await raceAbort(Promise.resolve(tool!.handler(args, context)), signal);
      if (signal.aborted) throw abortError([signal]);
      envelope = success(data);
    } catch (error) {
      // Unauthorized is not a tool failure: it ends the request (HTTP 401) wherever it is raised.
      if (error instanceof AgentUnauthorizedError) throw error;
      const cause =
        signal.aborted && !(error instanceof ParseAgentError) ? abortError([signal]) : error;
      if (!(cause instanceof ParseAgentError)) {
        this.warn(`${toolName} failed: ${(cause as Error)?.stack ?? String(cause)}`);
      }
      envelope = failureFromError(cause, toolName);
    } finally {
      clearTimeout(timer);
      call.dispose();
      running.delete(call);
      this.currentProgress = previousProgress;
    }
    this.emitEvent(toolName, args, envelope, Date.now() - started);
    return envelope;
  }

  /** Operator-facing warnings: the services' sink, or stderr. */
  protected warn(message: string): void {
    if (this.services.warn) this.services.warn(message);
    else process.stderr.write(`[parse-agent] ${message}\n`);
  }

  protected rateLimitKey(): string {
    return this.sessionToken
      ? `session:${this.sessionToken.slice(-12)}`
      : `${this.authType}:${this.aclUser ?? this.aclRole ?? 'master'}`;
  }

  protected refusal(
    toolName: string,
    tool: ToolDefinition | undefined,
  ): ParseAgentError | undefined {
    if (tool && this.permitsTool(tool)) return undefined;
    // A name the registry does not have is a typo or a tool this server lacks, not a permission
    // problem: say so, with close names among the tools this agent may call.
    if (!tool) return unknownToolError(toolName, this.allowedTools());
    const tierPermits =
      PERMISSION_HIERARCHY[tool.permission] <= PERMISSION_HIERARCHY[this.permissions];
    // The operator's tools: filter is named first when it is what refuses (it is the real fix).
    const ceiling = tierPermits ? this.clientCeilingRefusal(tool) : undefined;
    if (ceiling && passesListFilter(this.toolFilter, [toolName])) {
      return new AccessDeniedError(ceiling);
    }
    if (tierPermits) {
      return new ToolFilteredError(
        `Tool '${toolName}' is not enabled for this agent instance (excluded by the configured tools: filter).`,
      );
    }
    return new PermissionDeniedError(
      `Permission denied: '${toolName}' requires ${tool.permission} permissions. Current level: ${this.permissions}`,
    );
  }

  /**
   * Asks the person to confirm a destructive call. Without a way to ask, refuses unless the
   * operator switched confirmation off; a decline or dismissal always refuses.
   */
  protected async confirm(
    request: ConfirmationRequest,
    channel: ElicitationChannel | undefined,
    signal: AbortSignal,
  ): Promise<{ confirmed: boolean }> {
    if (!channel) {
      if (!this.confirmationRequired) return { confirmed: false };
      throw new AccessDeniedError(
        `${request.message.replace(/\?.*$/, '')}: this needs a person's confirmation, and this client cannot ask for it (it did not declare the MCP elicitation capability, or the call was not made over a streaming session). Use a client that supports elicitation; an operator can set confirmationRequired: false to run such calls without asking.`,
        { kind: 'confirmation_unavailable' },
      );
    }
    const answer = await channel.elicit(
      {
        message: request.message,
        requestedSchema: {
          type: 'object',
          properties: {
            confirm: {
              type: 'boolean',
              title: 'Confirm',
              description: `Allow ${request.tool} on ${request.className}${request.objectId ? ` ${request.objectId}` : ''}`,
            },
          },
          required: ['confirm'],
        },
      },
      signal,
    );
    if (answer.action === 'accept' && answer.content?.confirm !== false) return { confirmed: true };
    throw new AccessDeniedError(
      `The person did not confirm: ${request.tool} on ${request.className}${request.objectId ? ` ${request.objectId}` : ''} was not run (${answer.action === 'accept' ? 'declined' : answer.action}).`,
      { kind: 'confirmation_declined' },
    );
  }

  /** The audit event of a completed change (field names only), always emitted, and logged. */
  protected emitMutation(
    toolName: string,
    input: MutationAuditInput,
    confirmed: boolean | undefined,
  ): void {
    const event: MutationEvent = {
      ...input,
      tool: toolName,
      agent_id: this.agentId,
      auth_type: this.authType,
      using_master_key: this.usingMasterKey,
      permissions: this.permissions,
      ...(this.tenantId ? { tenant_id: this.tenantId } : {}),
      ...(confirmed !== undefined ? { confirmed } : {}),
      ...(this.correlationId ? { correlation_id: this.correlationId } : {}),
      at: new Date().toISOString(),
    };
    if (input.object_id === undefined) delete event.object_id;
    if (input.method === undefined) delete event.method;
    this.services.events.emitMutation(event);
  }

  protected emitEvent(
    toolName: string,
    args: Record<string, unknown>,
    envelope: ToolEnvelope,
    durationMs: number,
  ): void {
    if (!this.services.events.observed) return;
    this.services.events.emit(
      buildToolCallEvent({
        agent: this,
        toolName,
        args,
        envelope,
        durationMs,
        filters: { classes: this.classFilter, tools: this.toolFilter, methods: this.methodFilter },
        agentFilters: this.filters,
      }),
    );
  }
}

/** What wouldPermit answers. */
export interface PermitDecision {
  allowed: boolean;
  reason?: string;
  denied_at?: string;
}

function filterSummary(filter?: NormalizedListFilter): {
  only: string[] | null;
  except: string[] | null;
} {
  return {
    only: filter?.only ? [...filter.only].sort() : null,
    except: filter?.except.size ? [...filter.except].sort() : null,
  };
}

/** First 8 hex characters of SHA-256(token): correlates describes without revealing the token. */
function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token).digest('hex').slice(0, 8);
}

function abortError(signals: ReadonlyArray<AbortSignal | undefined>): ParseAgentError {
  const reason: unknown = signals.find((s) => s?.aborted)?.reason;
  if (reason instanceof ParseAgentError) return reason;
  return new AgentCancelledError(typeof reason === 'string' ? reason : undefined);
}
