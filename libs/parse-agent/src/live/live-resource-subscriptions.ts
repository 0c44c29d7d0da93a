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
import type { LiveQueryConnector } from './live-query-connector';
import type { ResolvedLiveQueryOptions } from './live-query-options';
import { LiveQueryPool, within } from './live-query-pool';
import {
  isPolicyRefusal,
  messageOf,
  nodeFull,
  notAnnounced,
  probeLiveQuery,
  RESYNC_SLICES,
  resyncSliceOf,
  samePrincipal,
  sessionEnded,
  sessionFull,
  sessionGone,
  storeCall,
  updatedNotification,
} from './live-subscription-helpers';
import { debounceEvent, idleHere, tellRestored } from './live-subscription-events';
import type {
  ActiveSubscription,
  Listener,
  ReloadMode,
  SessionState,
  SubscriptionRecord,
} from './live-subscription-state';
import { PlanRetries } from './plan-retries';
import { planSubscription, type LivePlan } from './subscription-plan';

export interface LiveSubscriptionsLogger {
  log(message: string): void;
  warn(message: string): void;
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
 * URIs, plans them for the stream's agent and runs them; it also re-reads them now and then, in case
 * an announcement was lost. A stream opening on a node (after another died, say) loads them the same
 * way and tells the client to re-read each. This node then keeps records only for sessions whose
 * stream it holds; `maxSubscriptions` bounds those.
 */
export class LiveResourceSubscriptions implements ResourceSubscriptionService {
  protected readonly sessions = new Map<string, SessionState>();
  protected readonly pool: LiveQueryPool;
  protected total = 0;
  protected answered = false;
  protected closed = false;
  protected stopWatching?: () => void;
  protected resyncTimer?: NodeJS.Timeout;

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
      if (state?.listener) void this.reload(state, state.listener, 'changed'); // never rejects
    });
    // An announcement can be lost (Redis blips between the record and the publish): the streams
    // held here re-read their records once an interval, and pick up what they missed; a slice of
    // them at a time, so the reads are spread over the interval instead of one burst.
    let tick = 0;
    this.resyncTimer = setInterval(() => {
      const slice = tick++ % RESYNC_SLICES;
      for (const [id, state] of this.sessions) {
        if (resyncSliceOf(id) !== slice || !state.listener || state.reloading) continue;
        void this.reload(state, state.listener, 'resync');
      }
    }, this.options.timing.resyncIntervalMs / RESYNC_SLICES);
    this.resyncTimer.unref();
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
    const recorded = state?.records.has(resource.uri);
    // Idempotent, unless the subscription sits idle on the open stream with no retry pending
    // (LiveQuery refused it, say): then this subscribe checks it again and starts it.
    if (recorded && !idleHere(state!, resource.uri)) return;
    if (!recorded) this.checkCaps(state);
    const plan = await planSubscription(agent, resource, this.options, signal);
    if (this.closed) return;
    // Checked again: the plan awaited, other subscribes may have filled the caps meanwhile.
    const current = this.stateFor(session);
    // The session may have ended while the plan awaited (DELETE, expiry): recording on its
    // forgotten state would hold a slot of the global cap for good.
    if (current.over) throw sessionEnded();
    const known = current.records.get(resource.uri);
    if (known) return this.restart(current, resource.uri, known, plan);
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
    const listener: Listener = {
      agent,
      deliver,
      active: new Map(),
      retries: new PlanRetries(this.options.timing.planRetryDelaysMs),
      skipped: new Set(),
    };
    state.listener = listener;
    if (this.shared) {
      // The records may have been made anywhere, and changes missed while no stream listened.
      void this.reload(state, listener, 'reattach'); // never rejects
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
    clearInterval(this.resyncTimer);
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
    const uri = resource.uri;
    if (!this.sessions.get(session.id)?.records.has(uri)) this.checkNodeCap();
    const plan = await planSubscription(agent, resource, this.options, signal);
    if (this.closed) return;
    const cap = this.options.maxSubscriptionsPerSession;
    const added = await storeCall(() => shared.add(session.id, uri, cap));
    if (added === 'full') throw this.sessionFull();
    if (added === 'gone') throw sessionGone();
    const state = this.sessions.get(session.id);
    const listener = state?.listener;
    const known = state?.records.get(uri);
    if (listener && !known) {
      // Checked again just before recording: other subscribes filled this node meanwhile maybe.
      if (this.total >= this.options.maxSubscriptions) {
        if (added === 'added') await shared.remove(session.id, uri).catch(() => undefined);
        throw nodeFull(this.options.maxSubscriptions);
      }
      state!.records.set(uri, { resource, plan });
      this.total += 1;
      listener.skipped.delete(uri);
    }
    if (added === 'added') await this.announce(shared, session, uri, 'subscribe');
    if (!listener) return;
    if (known) await this.restart(state!, uri, known, plan);
    else await this.activate(state!, listener, uri);
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
    if (removed) await this.announce(shared, session, uri, 'unsubscribe');
    return removed;
  }

  /**
   * Tells the other nodes a session's records changed; if Redis does not take the message, the
   * node holding the stream still applies the change on its next periodic re-read.
   */
  protected async announce(
    shared: SharedSubscriptionRecords,
    session: SubscribingSession,
    uri: string,
    change: 'subscribe' | 'unsubscribe',
  ): Promise<void> {
    if (await shared.announce(session.id).catch(() => false)) return;
    this.logger.warn(notAnnounced(change, uri, session.id, this.options.timing.resyncIntervalMs));
  }

  /** A subscribe of a recorded but idle subscription: planned by the subscribe, started again. */
  protected async restart(
    state: SessionState,
    uri: string,
    record: SubscriptionRecord,
    plan: LivePlan,
  ): Promise<void> {
    if (!idleHere(state, uri)) return;
    record.plan = plan;
    // Changes may have been missed while it was idle: the client re-reads once it runs.
    await this.activate(state, state.listener!, uri, true);
  }

  /**
   * Makes the stream's running subscriptions match the session's records in the store, one reload
   * of a session at a time.
   */
  protected reload(state: SessionState, listener: Listener, mode: ReloadMode): Promise<void> {
    const previous = state.reloading ?? Promise.resolve();
    // Never rejects (its callers do not await it): a failed reload is logged, and the next runs.
    const next = previous
      .catch(() => undefined)
      .then(() => this.reloadNow(state, listener, mode))
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
    mode: ReloadMode,
  ): Promise<void> {
    if (state.listener !== listener || this.closed) return;
    let uris: string[];
    try {
      uris = await this.shared!.list(state.session.id);
    } catch (error) {
      if (mode === 'resync') return; // said once, by the call that needed the records
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
    for (const uri of listener.skipped) if (!wanted.has(uri)) listener.skipped.delete(uri);
    const skipped: string[] = [];
    for (const uri of uris) {
      const known = state.records.has(uri);
      let tell = mode === 'reattach';
      if (!known) {
        let resource: ParsedResourceUri;
        try {
          resource = parseResourceUri(uri);
        } catch {
          continue;
        }
        if (this.total >= this.options.maxSubscriptions) {
          if (!listener.skipped.has(uri)) skipped.push(uri);
          listener.skipped.add(uri);
          continue;
        }
        state.records.set(uri, { resource });
        this.total += 1;
        // Skipped before (the client was told), or learnt only now from a periodic re-read (its
        // announcement was lost: changes since the subscribe went unheard): it re-reads once it runs.
        if (listener.skipped.delete(uri) || mode === 'resync') tell = true;
      }
      // Known records too (a newer stream of the session on this node took over from another),
      // except on a periodic re-read, and those a retry is pending for (it runs on its own time).
      if (known && (mode === 'resync' || listener.retries.has(uri))) continue;
      this.background(this.activate(state, listener, uri, tell));
    }
    if (skipped.length) {
      this.logger.warn(
        `${skipped.length} resource subscription(s) of a session stay idle on this node: it runs its maximum of ${this.options.maxSubscriptions} (liveQuery.maxSubscriptions, counted per node); the client was told to re-read them, and a subscribe again is refused with that setting named.`,
      );
      // The client believes them running: it re-reads each, and a subscribe again is refused.
      for (const uri of skipped) listener.deliver(updatedNotification(uri));
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
    if (!record) listener.retries.stop(uri);
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
    const retried = listener.retries.stop(uri);
    this.start(listener, uri, plan, tell || retried);
  }

  /**
   * The stream's agent could not plan a recorded subscription; the client is told to re-read the
   * resource (where it sees the error). Refused by policy (changed since the subscribe, or the
   * stream's agent may not): the record goes, on every node (fail closed). Otherwise (Parse slow
   * or unavailable) the record stays and the plan is tried again after 1, 2, 4, 8, 16 and 30 s,
   * then every 30 s while the stream stays open; the client is told again when the doubling ends.
   */
  protected async planFailed(
    state: SessionState,
    listener: Listener,
    uri: string,
    error: unknown,
  ): Promise<void> {
    if (isPolicyRefusal(error)) {
      this.logger.warn(`resource subscription ${uri} dropped: ${messageOf(error)}`);
      listener.retries.stop(uri);
      state.records.delete(uri);
      this.total -= 1;
      await this.shared?.remove(state.session.id, uri).catch(() => undefined);
      if (state.listener === listener) listener.deliver(updatedNotification(uri));
      return;
    }
    const step = listener.retries.failed(uri, () =>
      this.background(this.activate(state, listener, uri)),
    );
    if (step.attempt === 1 || step.rampOver) listener.deliver(updatedNotification(uri));
    if (step.delay === undefined) return; // a try is due already
    if (step.rampOver) {
      this.logger.warn(
        `resource subscription ${uri} still cannot be checked after ${step.attempt} tries (${messageOf(error)}): tried again every ${step.delay} ms while the session's stream stays open; the client was told to re-read it.`,
      );
    } else if (!step.steady) {
      this.logger.warn(
        `resource subscription ${uri} could not be checked (${messageOf(error)}): trying again in ${step.delay} ms.`,
      );
    }
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
          event: (kind, details) =>
            debounceEvent({ listener, uri, plan, active }, kind, details, this.options.debounceMs),
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
    listener.retries.stop(uri);
    const active = listener.active.get(uri);
    if (!active) return;
    listener.active.delete(uri);
    if (active.timer) clearTimeout(active.timer);
    await within(active.handle.close(), this.options.timeoutMs, 'LiveQuery unsubscribe').catch(
      () => undefined,
    );
    await this.pool.release(active.identity);
  }

  protected connectionDown(identity: string, reason: string): void {
    this.logger.warn(
      `LiveQuery connection (${identity === 'master' ? 'master key' : 'a user session'}) lost: ${reason}; reconnecting, subscriptions are sent again once it is back.`,
    );
  }

  /** Back after an outage: changes may have been missed, so every resource on it is re-read. */
  protected connectionRestored(identity: string): void {
    const resent = tellRestored(this.sessions.values(), identity);
    this.logger.log(
      `LiveQuery connection (${identity === 'master' ? 'master key' : 'a user session'}) restored: ${resent} subscription(s) re-established; clients were told to re-read.`,
    );
  }
}
