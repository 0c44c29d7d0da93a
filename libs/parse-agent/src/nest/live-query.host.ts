import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type Provider,
} from '@nestjs/common';
import type { ParseAgentModuleOptions } from '../composition/parse-agent-options.interface';
import { resolveLiveQueryOptions } from '../live/live-query-options';
import { LiveResourceSubscriptions } from '../live/live-resource-subscriptions';
import { ParseLiveQueryConnector } from '../live/parse-live-query-connector';
import { McpDispatcher } from '../mcp/mcp-dispatcher';
import { McpNotifier } from '../mcp/mcp-notifier';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { PARSE_AGENT_MODULE_OPTIONS } from './parse-agent.module-definition';
import { PARSE_AGENT_REDIS } from './parse-agent.constants';
import type { RedisConnection } from '../redis/redis-connection';
import { RedisLiveSubscriptions } from '../redis/redis-live-subscriptions';
import { RedisNotifyRelay } from '../redis/redis-notify-relay';
import { RedisSessionStore } from '../redis/redis-session-store';
import { SessionStore } from '../ports/session-store';

const LIVE_QUERY_LOG_CONTEXT = 'ParseAgentLiveQuery';

/** Internal token: the module's resource subscriptions, or null without the `liveQuery` option. */
export const PARSE_AGENT_LIVE_QUERY = Symbol('parse-agent:live-query');

/** Waits between probes of a LiveQuery server that does not answer yet (then every 30 s). */
const PROBE_DELAYS_MS = [0, 500, 1000, 2000, 5000, 10_000, 30_000];

/**
 * The `liveQuery` option as a service: built with the module, handed to the dispatcher (which
 * then serves resources/subscribe), and closed at shutdown. With the `redis` option (and the
 * library's Redis session store) the sessions' subscriptions are kept in Redis, so they work
 * whichever node holds a session's stream.
 */
export const liveQueryProvider: Provider = {
  provide: PARSE_AGENT_LIVE_QUERY,
  useFactory: async (
    options: ParseAgentModuleOptions,
    dispatcher: McpDispatcher,
    redis: RedisConnection | null,
    sessions: SessionStore | null,
  ): Promise<LiveResourceSubscriptions | null> => {
    if (!options.liveQuery) return null;
    const resolved = resolveLiveQueryOptions(options.liveQuery, options.parse.serverURL);
    const { appId, javascriptKey, masterKey } = options.parse;
    const connector = new ParseLiveQueryConnector({
      serverURL: resolved.serverURL,
      applicationId: appId,
      javascriptKey,
      masterKey,
    });
    // Only where sessions are the library's Redis store (the MCP endpoint's with `redis`): a record
    // is added against a session that store holds. Otherwise (no `mcp` extra, so no store, or the
    // application's own) sessions live where they are served, and so do their subscriptions.
    const shared =
      redis && sessions instanceof RedisSessionStore && !options.sessionStore
        ? new RedisLiveSubscriptions(redis)
        : undefined;
    const subscriptions = new LiveResourceSubscriptions(
      connector,
      resolved,
      new Logger(LIVE_QUERY_LOG_CONTEXT),
      shared,
    );
    await subscriptions.watchSharedRecords();
    dispatcher.useResourceSubscriptions(subscriptions);
    return subscriptions;
  },
  inject: [
    PARSE_AGENT_MODULE_OPTIONS,
    McpDispatcher,
    PARSE_AGENT_REDIS,
    { token: SessionStore, optional: true },
  ],
};

/**
 * The dispatcher's notifier as an injectable: `notify(target, method, params)`; with the `redis`
 * option it reaches listening streams on every node.
 */
export const mcpNotifierProvider: Provider = {
  provide: McpNotifier,
  useFactory: async (
    dispatcher: McpDispatcher,
    redis: RedisConnection | null,
  ): Promise<McpNotifier> => {
    if (redis) await new RedisNotifyRelay(redis, dispatcher.notifier).start();
    return dispatcher.notifier;
  },
  inject: [McpDispatcher, PARSE_AGENT_REDIS],
};

/**
 * Checks the `liveQuery` option at start-up (classes agents cannot read are reported) and probes the
 * LiveQuery server in the background until it answers (a server mounted by this same application
 * listens only after bootstrap); `resources.subscribe` is advertised from then on.
 */
@Injectable()
export class LiveQueryHost implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger(LIVE_QUERY_LOG_CONTEXT);
  protected stopped = false;
  protected timer?: NodeJS.Timeout;
  /** Settles once the first probe answered or gave up (tests await it). */
  ready?: Promise<boolean>;

  constructor(
    @Inject(PARSE_AGENT_LIVE_QUERY)
    protected readonly subscriptions: LiveResourceSubscriptions | null,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly options: ParseAgentModuleOptions,
    protected readonly metadata: MetadataRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.subscriptions) return;
    const unreadable = (this.options.liveQuery?.classNames ?? []).filter(
      (name) => this.metadata.isHidden(name) || this.metadata.isUnregisteredHidden(name),
    );
    if (unreadable.length) {
      this.logger.warn(
        `liveQuery.classNames lists ${unreadable.join(', ')}, which agents cannot read (hidden or unregistered): subscriptions to them are refused.`,
      );
    }
    this.ready = this.probeUntilAnswered(0);
  }

  protected async probeUntilAnswered(attempt: number): Promise<boolean> {
    const subscriptions = this.subscriptions!;
    if (this.stopped) return false;
    // The first attempts are quiet: a server this application mounts listens only after bootstrap.
    if (await subscriptions.probe(attempt === 2)) {
      if (attempt > 0) this.logger.log('LiveQuery answers: resource subscriptions are available.');
      return true;
    }
    const delay = PROBE_DELAYS_MS[Math.min(attempt + 1, PROBE_DELAYS_MS.length - 1)];
    await new Promise<void>((resolve) => {
      this.timer = setTimeout(resolve, delay);
      this.timer.unref();
    });
    return this.probeUntilAnswered(attempt + 1);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.subscriptions?.close();
  }
}
