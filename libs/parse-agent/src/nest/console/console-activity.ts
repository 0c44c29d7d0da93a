import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Observable, Subject, Subscription, map, merge } from 'rxjs';
import { AgentEvents, type MutationEvent, type ToolCallEvent } from '../../core/agent-events';
import { CONSOLE_OPTIONS } from './console.constants';
import type { ResolvedConsoleOptions } from './console-options';

/** One line of the console's activity feed: who, what, outcome, time. Names only, never values. */
export interface ConsoleActivityEntry {
  at: string;
  kind: 'tool_call' | 'mutation';
  actor: string;
  tool: string;
  outcome: string;
  duration_ms?: number;
  auth_type: string;
  permissions: string;
  /** Mutations: what changed (create, update, delete, call_method, ...), where, which fields. */
  action?: MutationEvent['action'];
  /** call_method: `Class.method`. */
  method?: string;
  class_name?: string;
  changed_keys?: string[];
}

const REMEMBERED_AGENTS = 1000;

/**
 * The operator's live view of tool calls and mutations, fed by AgentEvents. Keeps the last few
 * entries so a feed opened later starts with recent history. Who made a call comes from the
 * host's `actorOf` hook (run inside the call), else from the console's own agents, else the
 * agent's auth type.
 */
@Injectable()
export class ConsoleActivity implements OnModuleDestroy {
  protected readonly history: ConsoleActivityEntry[] = [];
  protected readonly live = new Subject<ConsoleActivityEntry>();
  protected readonly agents = new Map<string, string>();
  protected readonly subscription: Subscription;

  protected readonly limit: number;
  protected readonly actorOf?: () => string | undefined;

  constructor(
    @Inject(AgentEvents) events: AgentEvents,
    @Inject(CONSOLE_OPTIONS) options: ResolvedConsoleOptions,
  ) {
    this.limit = options.activityHistory;
    this.actorOf = options.actorOf;
    this.subscription = merge(
      // map runs synchronously, inside the emitting call: the actor hook sees its context.
      events.toolCalls$.pipe(map((e) => this.fromToolCall(e))),
      events.mutations$.pipe(map((e) => this.fromMutation(e))),
    ).subscribe((entry) => this.add(entry));
  }

  /** Names the caller of an agent the console created (for calls the host hook does not name). */
  remember(agentId: string, actor: string): void {
    if (this.agents.size >= REMEMBERED_AGENTS) {
      const oldest = this.agents.keys().next().value;
      if (oldest !== undefined) this.agents.delete(oldest);
    }
    this.agents.set(agentId, actor);
  }

  /**
   * Recent entries, then `onLive()` once they are all out, then every new one. Synchronous up to
   * the subscription, so no entry falls between history and live.
   */
  feed(onLive?: () => void): Observable<ConsoleActivityEntry> {
    return new Observable<ConsoleActivityEntry>((subscriber) => {
      for (const entry of this.history) subscriber.next(entry);
      onLive?.();
      return this.live.subscribe(subscriber);
    });
  }

  onModuleDestroy(): void {
    this.subscription.unsubscribe();
    this.live.complete();
  }

  protected add(entry: ConsoleActivityEntry): void {
    this.history.push(entry);
    if (this.history.length > this.limit) this.history.splice(0, this.history.length - this.limit);
    this.live.next(entry);
  }

  protected actor(agentId: string, authType: string, permissions: string): string {
    let named: string | undefined;
    try {
      named = this.actorOf?.();
    } catch {
      named = undefined;
    }
    return named || this.agents.get(agentId) || `${authType} agent (${permissions})`;
  }

  protected fromToolCall(e: ToolCallEvent): ConsoleActivityEntry {
    return {
      at: new Date().toISOString(),
      kind: 'tool_call',
      actor: this.actor(e.agent_id, e.auth_type, e.permissions),
      tool: e.tool,
      outcome: e.success
        ? 'ok'
        : `${e.error_code ?? 'error'}${e.denial_kind ? `/${e.denial_kind}` : ''}`,
      duration_ms: e.duration_ms,
      auth_type: e.auth_type,
      permissions: e.permissions,
    };
  }

  protected fromMutation(e: MutationEvent): ConsoleActivityEntry {
    return {
      at: e.at,
      kind: 'mutation',
      actor: this.actor(e.agent_id, e.auth_type, e.permissions),
      tool: e.tool,
      ...(e.method ? { method: e.method } : {}),
      outcome: e.failed ? 'failed after writes' : 'changed',
      auth_type: e.auth_type,
      permissions: e.permissions,
      action: e.action,
      class_name: e.class_name,
      changed_keys: [...e.changed_keys],
    };
  }
}
