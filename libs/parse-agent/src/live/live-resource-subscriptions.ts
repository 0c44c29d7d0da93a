import type { Subscription } from 'rxjs';
import type { ParseAgent } from '../agent/parse-agent';
import type { AgentValidationError } from '../core/errors';
import type { JsonRpcNotification } from '../mcp/mcp-dispatcher.types';
import type {
  ResourceSubscriptionService,
  SharedSubscriptionRecords,
  SubscribingSession,
} from '../mcp/resource-subscriptions.types';
import { parseResourceUri, type ParsedResourceUri } from '../mcp/resource-uri';
import type {
  LiveQueryConnector,
  LiveQueryEvent,
  LiveQueryEventDetails,
  LiveSubscriptionHandle,
} from './live-query-connector';
import type { ResolvedLiveQueryOptions } from './live-query-options';
import { LiveQueryPool, within } from './live-query-pool';
import {
  isPolicyRefusal,
  MAX_PLAN_RETRIES,
  messageOf,
  nodeFull,
  planRetryDelay,
  probeLiveQuery,
  samePrincipal,
  sessionEnded,
  sessionFull,
  sessionGone,
  storeCall,
  updatedNotification,
} from './live-subscription-helpers';
import { planSubscription, type LivePlan } from './subscription-plan';

export interface LiveSubscriptionsLogger {
  log(message: string): void;
  warn(message: string): void;
}

interface SubscriptionRecord {
  resource: ParsedResourceUri;
  /** Planned for the agent that subscribed; a stream opened by another agent plans again. */
  plan?: LivePlan;
}

interface ActiveSubscription {
  handle: LiveSubscriptionHandle;
  identity: string;
  timer?: NodeJS.Timeout;
}

interface Listener {
  agent: ParseAgent;
  deliver(notification: JsonRpcNotification): void;
  active: Map<string, ActiveSubscription>;
  /** Subscriptions whose plan failed for a reason other than policy: retried with backoff. */
  retries: Map<string, { attempt: number; timer?: NodeJS.Timeout }>;
}

interface SessionState {
  session: SubscribingSession;
  records: Map<string, SubscriptionRecord>;
  ended: Subscription;
  listener?: Listener;
  /** Shared records: the reload from the store in progress (reloads run one after another). */
  reloading?: Promise<void>;
  /** The session ended; set before the state is forgotten, so a late caller sees it. */
  over?: boolean;
}

/** What the console and the benchmark read. */
export interface LiveSubscriptionStats {
  sessions: number;
  subscriptions: number;
  /** Subscriptions running on LiveQuery now (their session's stream is open on this node). */
  active: number;
  connections: number;
}

/**
 * Resource subscriptions backed by Parse LiveQuery. A subscription belongs to its MCP session and
 * runs on LiveQuery while the session's listening stream (GET) is open on this node, over one
 * connection per identity; every matching change is debounced per (session, URI) into one
 * `notifications/resources/updated` on that stream. Subscriptions end on unsubscribe and with the
 * session (DELETE, expiry, shutdown); a closed stream stops their LiveQuery subscriptions, and a
 * reopened one starts them again.
 *
 * With `shared` records (Redis), a session's URIs are session state every node reads: any node
 * records a subscribe and announces it, and the node holding the session's stream (re)loads the
 * URIs, plans them for the stream's agent and runs them. A stream opening on a node (after another
 * died, say) loads them the same way and tells the client to re-read each. This node then keeps
 * records only for sessions whose stream it holds; `maxSubscriptions` bounds those.
 */
export class LiveResourceSubscriptions implements ResourceSubscriptionService {
  protected readonly sessions = new Map<string, SessionState>();
  protected readonly pool: LiveQueryPool;
  protected total = 0;
  protected answered = false;
  protected closed = false;
  protected stopWatching?: () => void;

  constructor(
    protected readonly connector: LiveQueryConnector,
    protected readonly options: ResolvedLiveQueryOptions,
    protected readonly logger: LiveSubscriptionsLogger,
    /** Where the sessions' URIs are kept across nodes (Redis); without it, in this node only. */
    protected readonly shared?: SharedSubscriptionRecords,
  ) {
    this.pool = new LiveQueryPool(connector, {
      down: (identity, reason) => this.connectionDown(identity, reason),
      restored: (identity) => this.connectionRestored(identity),
    });
  }

  get available(): boolean {
    return this.answered && !this.closed;
  }

  /** With shared records: hears the changes other nodes announce (call once, at start-up). */
  async watchSharedRecords(): Promise<void> {
    if (!this.shared || this.stopWatching) return;
    this.stopWatching = await this.shared.watch((sessionId) => {
      const state = this.sessions.get(sessionId);
      if (state?.listener) void this.reload(state, state.listener, false); // never rejects
    });
  }

  /**
   * Whether the LiveQuery server answers a master-key connection within the timeout; sets
   * `available`. Called at start-up (and again by the host until it answers).
   */
  async probe(report = true): Promise<boolean> {
    const problem = await probeLiveQuery(this.connector, this.options.timeoutMs);
    if (!problem) this.answered = true;
    else if (report)
      this.logger.warn(
        `LiveQuery at ${this.options.serverURL} does not answer (${problem}): resources/subscribe is not advertised until it does.`,
      );
    return this.answered;
  }

  async subscribe(
    agent: ParseAgent,
    session: SubscribingSession,
    resource: ParsedResourceUri,
    signal?: AbortSignal,
  ): Promise<void> {
    if (this.shared) return this.subscribeShared(this.shared, agent, session, resource, signal);
    const state = this.sessions.get(session.id);
    if (state?.records.has(resource.uri)) return; // idempotent
    this.checkCaps(state);
    const plan = await planSubscription(agent, resource, this.options, signal);
    if (this.closed) return;
    // Checked again: the plan awaited, other subscribes may have filled the caps meanwhile.
    const current = this.stateFor(session);
    // The session may have ended while the plan awaited (DELETE, expiry): recording on its
    // forgotten state would hold a slot of the global cap for good.
    if (current.over) throw sessionEnded();
    if (current.records.has(resource.uri)) return;
    this.checkCaps(current);
    current.records.set(resource.uri, { resource, plan });
    this.total += 1;
    if (current.listener) await this.activate(current, current.listener, resource.uri);
  }

  async unsubscribe(session: SubscribingSession, uri: string): Promise<boolean> {
    if (this.shared) return this.unsubscribeShared(this.shared, session, uri);
    const state = this.sessions.get(session.id);
    if (!state?.records.delete(uri)) return false;
    this.total -= 1;
    if (state.listener) await this.deactivate(state.listener, uri);
    if (!state.records.size && !state.listener) this.forget(state);
    return true;
  }

  listen(
    session: SubscribingSession,
    agent: ParseAgent,
    deliver: (notification: JsonRpcNotification) => void,
  ): () => void {
    const state = this.stateFor(session);
    if (state.over) return () => undefined; // an ended session's stream runs nothing
    // One listening stream per session: a newer one takes over.
    if (state.listener) this.background(this.detach(state, state.listener));
    const listener: Listener = { agent, deliver, active: new Map(), retries: new Map() };
    state.listener = listener;
    if (this.shared) {
      // The records may have been made anywhere, and changes missed while no stream listened.
      void this.reload(state, listener, true); // never rejects
      return () => {
        this.background(this.detach(state, listener));
        if (!state.listener) this.release(state);
      };
    }
    for (const uri of state.records.keys()) this.background(this.activate(state, listener, uri));
    return () => {
      this.background(this.detach(state, listener));
      if (!state.records.size && !state.listener) this.forget(state);
    };
  }

  /**
   * Subscriptions of one session (tests, the console). With shared records: only while this node
   * holds the session's stream (the full list is in the store).
   */
  subscriptionsOf(sessionId: string): string[] {
    return [...(this.sessions.get(sessionId)?.records.keys() ?? [])];
  }

  stats(): LiveSubscriptionStats {
    let active = 0;
    for (const state of this.sessions.values()) active += state.listener?.active.size ?? 0;
    return {
      sessions: this.sessions.size,
      subscriptions: this.total,
      active,
      connections: this.pool.size,
    };
  }

  /** Ends every subscription and closes every LiveQuery connection (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    this.stopWatching?.();
    const all = [...this.sessions.values()];
    await Promise.all(all.map((state) => this.end(state)));
    await this.pool.closeAll();
  }

  /**
   * Shared records: the per-session cap is counted in the store (all nodes), the node cap here.
   * The record is made wherever the call lands; the node holding the stream runs it.
   */
  protected async subscribeShared(
    shared: SharedSubscriptionRecords,
    agent: ParseAgent,
    session: SubscribingSession,
    resource: ParsedResourceUri,
    signal?: AbortSignal,
  ): Promise<void> {
    if (!this.sessions.get(session.id)?.records.has(resource.uri)) this.checkNodeCap();
    const plan = await planSubscription(agent, resource, this.options, signal);
    if (this.closed) return;
    const cap = this.options.maxSubscriptionsPerSession;
    const added = await storeCall(() => shared.add(session.id, resource.uri, cap));
    if (added === 'full') throw this.sessionFull();
    if (added === 'gone') throw sessionGone();
    if (added === 'added') await shared.announce(session.id).catch(() => undefined);
    const state = this.sessions.get(session.id);
    if (!state?.listener || state.records.has(resource.uri)) return;
    state.records.set(resource.uri, { resource, plan });
    this.total += 1;
    await this.activate(state, state.listener, resource.uri);
  }

  protected async unsubscribeShared(
    shared: SharedSubscriptionRecords,
    session: SubscribingSession,
    uri: string,
  ): Promise<boolean> {
    let removed: boolean;
    try {
      removed = await storeCall(() => shared.remove(session.id, uri));
    } finally {
      // Stopped here even when Redis does not answer (the error is still reported): an
      // unsubscribe never leaves the subscription running on this node.
      const state = this.sessions.get(session.id);
      if (state?.records.delete(uri)) {
        this.total -= 1;
        if (state.listener) await this.deactivate(state.listener, uri);
      }
    }
    if (removed) await shared.announce(session.id).catch(() => undefined);
    return removed;
  }

  /**
   * Makes the stream's running subscriptions match the session's records in the store, one reload
   * of a session at a time. `reattach`: the stream just opened, so every resource is re-read.
   */
  protected reload(state: SessionState, listener: Listener, reattach: boolean): Promise<void> {
    const previous = state.reloading ?? Promise.resolve();
    // Never rejects (its callers do not await it): a failed reload is logged, and the next runs.
    const next = previous
      .catch(() => undefined)
      .then(() => this.reloadNow(state, listener, reattach))
      .catch((error: unknown) =>
        this.logger.warn(
          `resource subscriptions of a session could not be reloaded (${messageOf(error)}): they are loaded again when its stream reconnects or its subscriptions change.`,
        ),
      );
    state.reloading = next;
    void next.then(() => {
      if (state.reloading === next) state.reloading = undefined;
    });
    return next;
  }

  protected async reloadNow(
    state: SessionState,
    listener: Listener,
    reattach: boolean,
  ): Promise<void> {
    if (state.listener !== listener || this.closed) return;
    let uris: string[];
    try {
      uris = await this.shared!.list(state.session.id);
    } catch (error) {
      this.logger.warn(
        `resource subscriptions of a session could not be read from Redis (${(error as Error)?.message}): its stream gets no resource updates until it reconnects or the subscriptions change.`,
      );
      return;
    }
    if (state.listener !== listener) return;
    // The records are matched to the list without awaiting in between, so a subscribe or
    // unsubscribe made on this node meanwhile is not undone by a list read before it.
    const wanted = new Set(uris);
    const closing: Array<Promise<void>> = [];
    for (const uri of [...state.records.keys()]) {
      if (wanted.has(uri) || !state.records.delete(uri)) continue;
      this.total -= 1;
      closing.push(this.deactivate(listener, uri));
    }
    let skipped = 0;
    for (const uri of uris) {
      if (!state.records.has(uri)) {
        let resource: ParsedResourceUri;
        try {
          resource = parseResourceUri(uri);
        } catch {
          continue;
        }
        if (this.total >= this.options.maxSubscriptions) {
          skipped += 1;
          continue;
        }
        state.records.set(uri, { resource });
        this.total += 1;
      }
      // Known records too: a newer stream of the session on this node took over from another.
      this.background(this.activate(state, listener, uri, reattach));
    }
    if (skipped) {
      this.logger.warn(
        `${skipped} resource subscription(s) of a session stay idle on this node: it runs its maximum of ${this.options.maxSubscriptions} (liveQuery.maxSubscriptions, counted per node).`,
      );
    }
    await Promise.all(closing);
  }

  /** Shared records: the stream left this node, so its records here go (the store keeps them). */
  protected release(state: SessionState): void {
    this.total -= state.records.size;
    state.records.clear();
    this.forget(state);
  }

  protected checkCaps(state: SessionState | undefined): void {
    if ((state?.records.size ?? 0) >= this.options.maxSubscriptionsPerSession) {
      throw this.sessionFull();
    }
    this.checkNodeCap();
  }

  protected sessionFull(): AgentValidationError {
    return sessionFull(this.options.maxSubscriptionsPerSession);
  }

  protected checkNodeCap(): void {
    if (this.total >= this.options.maxSubscriptions) throw nodeFull(this.options.maxSubscriptions);
  }

  protected stateFor(session: SubscribingSession): SessionState {
    let state = this.sessions.get(session.id);
    if (state) return state;
    const created: SessionState = {
      session,
      records: new Map(),
      ended: undefined as unknown as Subscription,
    };
    this.sessions.set(session.id, created);
    created.ended = session.ended$.subscribe({
      complete: () => this.background(this.end(created)),
    });
    state = created;
    return state;
  }

  /** The session ended: its subscriptions go, wherever they run. */
  protected async end(state: SessionState): Promise<void> {
    state.over = true;
    this.total -= state.records.size;
    state.records.clear();
    if (state.listener) await this.detach(state, state.listener);
    this.forget(state);
  }

  protected forget(state: SessionState): void {
    state.ended?.unsubscribe();
    if (this.sessions.get(state.session.id) === state) this.sessions.delete(state.session.id);
  }

  protected async detach(state: SessionState, listener: Listener): Promise<void> {
    if (state.listener === listener) state.listener = undefined;
    for (const retry of listener.retries.values()) clearTimeout(retry.timer);
    listener.retries.clear();
    await Promise.all([...listener.active.keys()].map((uri) => this.deactivate(listener, uri)));
  }

  /**
   * Starts one recorded subscription on LiveQuery for the session's stream on this node; `tell`:
   * once it runs, the client is told to re-read the resource (it may have missed changes).
   */
  protected async activate(
    state: SessionState,
    listener: Listener,
    uri: string,
    tell = false,
  ): Promise<void> {
    const record = state.records.get(uri);
    if (!record) this.stopRetrying(listener, uri);
    if (!record || listener.active.has(uri) || this.closed) return;
    let plan = record.plan;
    if (!plan || !samePrincipal(plan, listener.agent)) {
      try {
        plan = await planSubscription(listener.agent, record.resource, this.options);
      } catch (error) {
        if (state.records.get(uri) === record && state.listener === listener)
          await this.planFailed(state, listener, uri, error);
        return;
      }
      record.plan = plan;
    }
    if (state.listener !== listener || listener.active.has(uri)) return;
    if (state.records.get(uri) !== record) return; // unsubscribed meanwhile
    // After failed tries the client re-reads (it was told of the failure, and changes were missed).
    const retried = this.stopRetrying(listener, uri);
    this.start(listener, uri, plan, tell || retried);
  }

  /**
   * The stream's agent could not plan a recorded subscription; the client is told to re-read the
   * resource (where it sees the error). Refused by policy (changed since the subscribe, or the
   * stream's agent may not): the record goes, on every node (fail closed). Otherwise (Parse slow
   * or unavailable) the record stays and the plan is tried again, a bounded number of times.
   */
  protected async planFailed(
    state: SessionState,
    listener: Listener,
    uri: string,
    error: unknown,
  ): Promise<void> {
    if (isPolicyRefusal(error)) {
      this.logger.warn(`resource subscription ${uri} dropped: ${messageOf(error)}`);
      this.stopRetrying(listener, uri);
      state.records.delete(uri);
      this.total -= 1;
      await this.shared?.remove(state.session.id, uri).catch(() => undefined);
      if (state.listener === listener) listener.deliver(updatedNotification(uri));
      return;
    }
    const retry = listener.retries.get(uri) ?? { attempt: 0 };
    listener.retries.set(uri, retry);
    retry.attempt += 1;
    if (retry.attempt === 1) listener.deliver(updatedNotification(uri));
    if (retry.timer) return; // a retry is due already
    if (retry.attempt > MAX_PLAN_RETRIES) {
      listener.retries.delete(uri);
      this.logger.warn(
        `resource subscription ${uri} stays idle: its check failed ${MAX_PLAN_RETRIES + 1} times (${messageOf(error)}); it is tried again when the stream reconnects or the session's subscriptions change.`,
      );
      return;
    }
    const delay = planRetryDelay(retry.attempt);
    this.logger.warn(
      `resource subscription ${uri} could not be checked (${messageOf(error)}): trying again in ${delay} ms.`,
    );
    retry.timer = setTimeout(() => {
      retry.timer = undefined;
      this.background(this.activate(state, listener, uri));
    }, delay);
    retry.timer.unref();
  }

  /** Ends the retries of one subscription's plan; true if its plan had failed before. */
  protected stopRetrying(listener: Listener, uri: string): boolean {
    const retry = listener.retries.get(uri);
    if (!retry) return false;
    clearTimeout(retry.timer);
    listener.retries.delete(uri);
    return true;
  }

  /** A promise nobody awaits: a failure is logged, never left unhandled (it would end the process). */
  protected background(promise: Promise<unknown>): void {
    promise.catch((error: unknown) =>
      this.logger.warn(`resource subscriptions: ${messageOf(error)}`),
    );
  }

  /** Opens one subscription on the identity's connection. */
  protected start(listener: Listener, uri: string, plan: LivePlan, tell = false): void {
    const { identity, connection } = this.pool.acquire(plan.credentials);
    const active: ActiveSubscription = {
      identity,
      handle: connection.subscribe(
        { className: plan.className, where: plan.where },
        {
          event: (kind, details) => this.onEvent(listener, uri, plan, active, kind, details),
          // Refusals settle `ready` (below); socket trouble is the pool's to report.
          error: () => undefined,
        },
      ),
    };
    listener.active.set(uri, active);
    active.handle.ready.then(
      () => {
        if (tell && listener.active.get(uri) === active) listener.deliver(updatedNotification(uri));
      },
      (error: unknown) => this.refused(listener, uri, active, error),
    );
  }

  /**
   * LiveQuery refused a subscription the checks allowed (they mirror its rules, so this is rare):
   * the subscription stops and the log says why; the record stays, so a new stream tries again.
   */
  protected async refused(
    listener: Listener,
    uri: string,
    active: ActiveSubscription,
    error: unknown,
  ) {
    if (listener.active.get(uri) !== active) return;
    const message = error instanceof Error ? error.message : String(error);
    await this.deactivate(listener, uri);
    this.logger.warn(`LiveQuery refused resource subscription ${uri}: ${message}`);
  }

  protected async deactivate(listener: Listener, uri: string): Promise<void> {
    const active = listener.active.get(uri);
    if (!active) return;
    listener.active.delete(uri);
    if (active.timer) clearTimeout(active.timer);
    await within(active.handle.close(), this.options.timeoutMs, 'LiveQuery unsubscribe').catch(
      () => undefined,
    );
    await this.pool.release(active.identity);
  }

  /** One matching change: debounced per (session, URI) into one update on the stream. */
  protected onEvent(
    listener: Listener,
    uri: string,
    plan: LivePlan,
    active: ActiveSubscription,
    kind: LiveQueryEvent,
    details: LiveQueryEventDetails,
  ): void {
    if (kind === 'update') {
      if (plan.ignoreUpdates) return;
      const watched = plan.fields;
      const relevant = (details.changed ?? []).filter((f) => f !== 'updatedAt');
      if (!relevant.length) return;
      if (watched && !relevant.some((f) => watched.includes(f))) return;
    }
    if (active.timer || listener.active.get(uri) !== active) return;
    active.timer = setTimeout(() => {
      active.timer = undefined;
      if (listener.active.get(uri) !== active) return;
      listener.deliver(updatedNotification(uri));
    }, this.options.debounceMs);
  }

  protected connectionDown(identity: string, reason: string): void {
    this.logger.warn(
      `LiveQuery connection (${identity === 'master' ? 'master key' : 'a user session'}) lost: ${reason}; reconnecting, subscriptions are sent again once it is back.`,
    );
  }

  /** Back after an outage: changes may have been missed, so every resource on it is re-read. */
  protected connectionRestored(identity: string): void {
    let resent = 0;
    for (const state of this.sessions.values()) {
      const listener = state.listener;
      if (!listener) continue;
      for (const [uri, active] of listener.active) {
        if (active.identity !== identity) continue;
        resent += 1;
        listener.deliver(updatedNotification(uri));
      }
    }
    this.logger.log(
      `LiveQuery connection (${identity === 'master' ? 'master key' : 'a user session'}) restored: ${resent} subscription(s) re-established; clients were told to re-read.`,
    );
  }
}
