import { randomUUID } from 'node:crypto';
import { Subject, type Observable } from 'rxjs';
import { isolateSubscribers } from '../core/isolated-observable';
import type { AgentIdentity, AuthType } from '../core/agent-identity';
import {
  CORRELATION_ID_PATTERN,
  MAX_CORRELATION_ID_LENGTH,
  tierReaches,
  type PermissionLevel,
} from '../core/constants';
import { AgentCancelledError } from '../core/errors';
import type { LinkedAbort } from '../core/linked-abort';
import { INSPECT, inspectAs, secretDigest, shownSecret } from '../core/secret-display';
import { securityBanner } from '../core/security-banner';
import type { SlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import { checkRateLimit, type RateLimiter } from '../ports/rate-limiter';
import type { Where } from '../query/constraint-translator';
import { passesListFilter, type NormalizedListFilter } from '../security/class-filter';
import { ReadPolicy } from '../security/read-policy';
import type { ProgressUpdate } from '../tools/tool-context';
import type { AgentOwnOptions, AgentServices } from './agent-options';
import type { ObservabilitySettings } from './agent-observability';
import { warnUnconfirmedWrites } from './unconfirmed-writes';
import { resolveAgentOptions, type InheritedSettings } from './resolve-agent-options';
import type { ImpersonationInfo, ResolvedImpersonation } from './agent-impersonation';
import type { ApprovalSettings } from './agent-approval';
import type { PromptCanaries } from './prompt-canaries';

/**
 * Who an agent is and what it may do, once its options are resolved: identity, tier, filters,
 * tenant, limits; its cancellation, correlation id, progress and rate limit. ParseAgent builds on
 * it with what an agent does (tools, calls, introspection, conversations, hooks).
 */
export class AgentCore implements AgentIdentity {
  readonly agentId = randomUUID();
  readonly permissions: PermissionLevel;
  /** Held privately: printing, spreading or serializing the agent never reaches it. */
  #sessionToken?: string;
  #authType: AuthType;
  #access: ReadPolicy;
  /** The user this agent acts as through `impersonate()` (its session token is #sessionToken). */
  #impersonation?: ResolvedImpersonation;
  /** Built as a master-key agent: only such an agent may impersonate (and stop). */
  protected readonly baseMasterKey: boolean;
  readonly aclRole?: string;
  readonly aclUser?: string;
  readonly tenantId?: string;
  readonly agentDepth: number;
  readonly recursionDepth: number;
  readonly parentAgentId?: string;
  readonly allowMutations: boolean;
  readonly confirmationRequired: boolean;
  readonly agentDebug: boolean;
  readonly sourceProvenance: boolean;
  /** Tiers whose calls wait for a person's approval (the `confirm` option). */
  protected readonly approvals: ApprovalSettings;
  /** Canaries every tool result is scanned for (the `promptCanaries` option). */
  protected readonly promptCanaries?: PromptCanaries;
  protected readonly strictModes: { toolFilter: boolean; classFilter: boolean };
  protected readonly toolFilter?: NormalizedListFilter;
  /** The named tool profile (`tools: 'lean'`) the tools filter came from, if any. */
  protected readonly toolProfile?: string;
  protected readonly methodFilter?: NormalizedListFilter;
  /** The method filters of this sub-agent's ancestors: a call must pass each of them too. */
  protected readonly inheritedMethodFilters: readonly NormalizedListFilter[];
  protected readonly classFilter?: NormalizedListFilter;
  protected readonly filters: Readonly<Record<string, Where>>;
  protected readonly rateLimiter: RateLimiter;
  /** Per-agent windows (this agent's and its ancestors'), charged after the shared limiter. */
  protected readonly ownRateWindows: readonly SlidingWindowRateLimiter[];
  /** Audit, operation-log and telemetry settings. */
  protected readonly observability: ObservabilitySettings;
  /** The parent of a sub-agent: its progress (and hooks) reach the parent too. */
  protected readonly parentAgent?: AgentCore;
  /** Created on first use: many agents (one per MCP request) never need one. */
  protected abortController?: AbortController;
  /** Calls in flight, so cancel() reaches them without every call creating the agent's signal. */
  protected running?: Set<LinkedAbort>;
  protected readonly progressSubject = new Subject<ProgressUpdate>();
  protected currentProgress?: (update: ProgressUpdate) => void;
  protected correlation?: string;

  /**
   * Tool progress reported during calls (the MCP layer forwards it as notifications). A subscriber
   * that throws is reported as a warning, never a failed call.
   */
  readonly progress$: Observable<ProgressUpdate> = isolateSubscribers(
    this.progressSubject,
    'agent.progress$',
    (message) => this.warn(message),
  );

  constructor(
    options: AgentOwnOptions & { parent?: AgentCore },
    protected readonly services: AgentServices,
  ) {
    const parent = options.parent;
    const { correlationId, ...settings } = resolveAgentOptions(
      options,
      services,
      parent?.inheritable(),
      this.agentId,
      (m) => this.warn(m),
    );
    // One by one, not Object.assign: V8 then keeps these in the object itself (agents are made
    // per request, so their size and shape matter).
    this.permissions = settings.permissions;
    this.#sessionToken = settings.sessionToken;
    this.aclUser = settings.aclUser;
    this.aclRole = settings.aclRole;
    this.#authType = settings.authType;
    this.baseMasterKey = settings.authType === 'master_key';
    // A sub-agent of an impersonating agent acts for the same user, under the same label.
    if (settings.impersonation && settings.sessionToken === settings.impersonation.sessionToken)
      this.#impersonation = { ...settings.impersonation, minted: false, sessionId: undefined };
    this.tenantId = settings.tenantId;
    this.recursionDepth = settings.recursionDepth;
    this.agentDepth = settings.agentDepth;
    this.parentAgentId = settings.parentAgentId;
    this.toolFilter = settings.toolFilter;
    this.toolProfile = settings.toolProfile;
    this.methodFilter = settings.methodFilter;
    this.inheritedMethodFilters = settings.inheritedMethodFilters;
    this.classFilter = settings.classFilter;
    this.filters = settings.filters;
    this.allowMutations = settings.allowMutations;
    this.confirmationRequired = settings.confirmationRequired;
    this.agentDebug = settings.agentDebug;
    this.sourceProvenance = settings.sourceProvenance;
    this.approvals = settings.approvals;
    this.promptCanaries = settings.promptCanaries;
    this.strictModes = settings.strictModes;
    this.ownRateWindows = settings.ownRateWindows;
    this.rateLimiter = settings.rateLimiter;
    this.observability = settings.observability;
    this.correlationId = correlationId;
    this.parentAgent = parent;

    for (const signal of [options.signal, parent?.signal]) {
      if (!signal) continue;
      if (signal.aborted) this.controller.abort(signal.reason);
      else
        signal.addEventListener('abort', () => this.controller.abort(signal.reason), {
          once: true,
        });
    }

    this.#access = this.buildAccess();

    warnUnconfirmedWrites(this);
    if (this.authType === 'master_key' && !parent) {
      securityBanner(
        'master-key-agent',
        'An agent without a session token runs with the master key: Parse ACLs and CLPs do not apply. Hidden classes, @AgentFields, canonical filters and tenant scopes are the only limits. Pass sessionToken to scope an agent to a user, or call suppressSecurityBanners() if this is intended.',
      );
    }
  }

  /** The Parse session token this agent acts with (undefined for every other identity). */
  get sessionToken(): string | undefined {
    return this.#sessionToken;
  }

  get authType(): AuthType {
    return this.#authType;
  }

  /** Tiers whose calls wait for a person's approval (the `confirm` option). */
  get approvalTiers(): readonly string[] {
    return [...this.approvals.tiers];
  }

  get approvalTimeoutMs(): number {
    return this.approvals.timeoutMs;
  }

  /** How many canaries the agent scans results for, and what a match does (none: undefined). */
  get canarySummary(): { count: number; action: 'report' | 'refuse' } | undefined {
    const canaries = this.promptCanaries;
    return canaries && { count: canaries.matchers.length, action: canaries.action };
  }

  /** The agent's read policy (rebuilt when impersonation changes who the agent is). */
  get access(): ReadPolicy {
    return this.#access;
  }

  /** Whom the agent impersonates (user objectId, label, whether the session was minted), if anyone. */
  get impersonation(): ImpersonationInfo | undefined {
    const current = this.#impersonation;
    return current && { user: current.user, label: current.label, minted: current.minted };
  }

  /** The binding `stopImpersonating()` undoes (with its minted session, to revoke). */
  protected get currentImpersonation(): ResolvedImpersonation | undefined {
    return this.#impersonation;
  }

  /**
   * Switches who the agent is, in one step, after the session has been resolved (so a failed
   * resolution changes nothing): the user's session, or back to the master key. The read policy
   * is rebuilt, as what is hidden depends on the identity.
   */
  protected bindImpersonation(next: ResolvedImpersonation | undefined): void {
    this.#sessionToken = next?.sessionToken;
    this.#authType = next ? 'session_token' : 'master_key';
    this.#impersonation = next;
    this.#access = this.buildAccess();
  }

  protected buildAccess(): ReadPolicy {
    return new ReadPolicy(
      this,
      this.services.metadata,
      this.services.schemas,
      this.classFilter,
      this.filters,
      this.services.queryLimits,
    );
  }

  /**
   * What `console.log(agent)`, `util.inspect` and `JSON.stringify` show: who the agent acts for,
   * the session token as a fingerprint only, never the token.
   */
  protected printable(): Record<string, unknown> {
    return {
      agent_id: this.agentId,
      auth_type: this.authType,
      session_token: shownSecret(this.#sessionToken),
      acl_user: this.aclUser,
      acl_role: this.aclRole,
      ...(this.#impersonation
        ? {
            impersonated_user: this.#impersonation.user,
            impersonation_label: this.#impersonation.label,
          }
        : {}),
      tenant_id: this.tenantId,
      permissions: this.permissions,
      agent_depth: this.agentDepth,
      parent_agent_id: this.parentAgentId,
      correlation_id: this.correlationId,
    };
  }

  [INSPECT](
    _depth: number,
    options: object,
    inspect: (value: unknown, options?: object) => string,
  ): string {
    return inspectAs(this.constructor.name, this.printable(), options, inspect);
  }

  toJSON(): Record<string, unknown> {
    return this.printable();
  }

  /** What a sub-agent of this agent inherits (and may only narrow). */
  protected inheritable(): InheritedSettings {
    const { agentId, permissions, sessionToken, aclUser, aclRole, tenantId } = this;
    const { recursionDepth, agentDepth, toolFilter, methodFilter, classFilter, filters } = this;
    return {
      ...{ agentId, permissions, sessionToken, aclUser, aclRole, tenantId, recursionDepth },
      ...{ agentDepth, toolFilter, methodFilter, classFilter, filters },
      toolProfile: this.toolProfile,
      inheritedMethodFilters: this.inheritedMethodFilters,
      allowMutations: this.allowMutations,
      confirmationRequired: this.confirmationRequired,
      agentDebug: this.agentDebug,
      ownRateWindows: this.ownRateWindows,
      rateLimiter: this.rateLimiter,
      correlationId: this.correlationId,
      observability: this.observability,
      sourceProvenance: this.sourceProvenance,
      impersonation: this.#impersonation,
      approvals: this.approvals,
      promptCanaries: this.promptCanaries,
    };
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
    return tierReaches(this.permissions, required);
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

  /** Called by tools (built-in or custom) to report progress of the current call. */
  reportProgress(update: ProgressUpdate): void {
    if (!Number.isFinite(update.progress)) return;
    try {
      this.currentProgress?.(update);
    } catch (error) {
      // The caller's onProgress is an observer of the call: its failure is not the call's.
      this.warn(
        `an onProgress callback threw (ignored): ${(error as Error)?.stack ?? String(error)}`,
      );
    }
    this.progressSubject.next(update);
    // A sub-agent works for its parent's call: its progress is that call's progress too.
    this.parentAgent?.reportProgress(update);
  }

  /**
   * Charges one request to this principal's rate limit; throws RateLimitExceededError when over.
   * `execute()` charges every tool call; the MCP transport charges the other methods that cost
   * work (initialize, listings), so no method is a free way to load the server.
   */
  async consumeRateLimit(): Promise<void> {
    const prepaid = this.prepaid;
    if (prepaid) {
      // Charged already, while the transport checked the session (see prepayRateLimit).
      this.prepaid = undefined;
      await prepaid;
    } else {
      await this.chargeSharedLimiter();
    }
    // In-process windows: synchronous, and usually none at all.
    for (const window of this.ownRateWindows) window.check();
  }

  /**
   * Starts charging the next call to the shared limiter now, so a transport can overlap it with
   * its own store round trip (the session check): with Redis both go out together, one round trip
   * instead of two. The next `consumeRateLimit()` uses this charge instead of charging again; an
   * agent holds at most one (undefined when it holds one already). The call it was taken for is
   * counted even if it never runs (its session was unknown, its tool name wrong): call
   * `dropPrepaid` with the returned promise once that request is answered.
   */
  prepayRateLimit(): Promise<void> | undefined {
    if (this.prepaid) return undefined;
    const charge = this.chargeSharedLimiter();
    // Settled by whoever consumes it; a dropped one must not surface as unhandled.
    charge.catch(() => undefined);
    this.prepaid = charge;
    return charge;
  }

  /** Forgets a prepaid charge no call consumed (the request ended before its tool ran). */
  dropPrepaid(charge: Promise<void> | undefined): void {
    if (charge && this.prepaid === charge) this.prepaid = undefined;
  }

  protected chargeSharedLimiter(): Promise<void> {
    return checkRateLimit(this.rateLimiter, this.rateLimitKey(), (error) =>
      this.warn(
        `rate limiter failure: ${(error as Error)?.name ?? 'Error'}: ${(error as Error)?.message ?? String(error)}`,
      ),
    );
  }

  /** A charge taken ahead of the call (prepayRateLimit), not yet consumed. */
  protected prepaid?: Promise<void>;

  /** Operator-facing warnings: the services' sink, or stderr. */
  protected warn(message: string): void {
    if (this.services.warn) this.services.warn(message);
    else process.stderr.write(`[parse-agent] ${message}\n`);
  }

  /**
   * The shared limiter's key: a session by a digest of its token (limiter stores, Redis among
   * them, must not hold token material), other identities by name.
   */
  protected rateLimitKey(): string {
    if (this.#sessionToken === undefined)
      return `${this.authType}:${this.aclUser ?? this.aclRole ?? 'master'}`;
    return (this.#sessionKey ??= `session:${secretDigest(this.#sessionToken)}`);
  }

  #sessionKey?: string;
}
