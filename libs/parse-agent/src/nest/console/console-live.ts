import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  Inject,
  Injectable,
  NotFoundException,
  Optional,
  ServiceUnavailableException,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Subject, take, type Observable } from 'rxjs';
import type { ParseAgent } from '../../agent/parse-agent';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';
import {
  AccessDeniedError,
  ParseAgentError,
  ParseRequestError,
  StoreUnavailableError,
} from '../../core/errors';
import { McpDispatcher } from '../../mcp/mcp-dispatcher';
import { McpMethodError } from '../../mcp/mcp-method-error';
import { resourceReadCall } from '../../mcp/mcp-resources';
import type { ResourceSubscriptionService } from '../../mcp/resource-subscriptions.types';
import { parseResourceUri, type ParsedResourceUri } from '../../mcp/resource-uri';
import { SessionLimitError, SessionStore } from '../../ports/session-store';
import type { ResolvedMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';
import { MCP_ENDPOINT_OPTIONS } from '../parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';
import type { ConsoleCaller } from './console-options';

const SSE_HEARTBEAT_MS = 15_000;
/** Live counts one identity may watch at once (pages and tabs together). */
export const MAX_LIVE_STREAMS_PER_CALLER = 8;

/** The session a live count subscribes in: kept alive while the page watches, ended after. */
interface LiveSession {
  id: string;
  ended$: Observable<void>;
  /** Marks the session used (its idle clock); false when it is gone. */
  touch(): Promise<boolean>;
  end(): Promise<void>;
}

/** What the page asks first: whether live counts are on, and for which classes. */
export interface ConsoleLiveInfo {
  available: boolean;
  /** `liveQuery.classNames` this identity may count. */
  class_names: string[];
}

/**
 * The console's live count: a real resource subscription to `parse://<Class>/count` for the
 * caller's own agent, through the same service MCP clients subscribe with (the `liveQuery`
 * option), so the page sees exactly the changes that identity's MCP client would hear of. Each
 * open stream is an MCP session of its own in the endpoint's SessionStore (so its caps count it,
 * and with Redis every node knows it, as resource subscriptions there require), kept alive while
 * the page watches and ended when the page's request closes. Without an MCP endpoint the session
 * lives in this process only.
 */
@Injectable()
export class ConsoleLive {
  /** Open live streams per caller. */
  protected readonly streams = new Map<string, number>();

  constructor(
    @Inject(McpDispatcher) protected readonly dispatcher: McpDispatcher,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly moduleOptions: ParseAgentModuleOptions,
    @Optional() @Inject(SessionStore) protected readonly sessions?: SessionStore,
    @Optional() @Inject(MCP_ENDPOINT_OPTIONS) protected readonly mcp?: ResolvedMcpEndpointOptions,
  ) {}

  protected get service(): ResourceSubscriptionService | undefined {
    return this.dispatcher.subscriptions;
  }

  info(agent: ParseAgent): ConsoleLiveInfo {
    if (!this.service?.available) return { available: false, class_names: [] };
    const names = this.moduleOptions.liveQuery?.classNames ?? [];
    return {
      available: true,
      class_names: names.filter(
        (className) => agent.wouldPermit('count_objects', { className }).allowed,
      ),
    };
  }

  /**
   * Subscribes the agent to the class's count (refusals are HTTP errors before anything is
   * written), then streams `event: count` on `res`: the count now, and again after every change
   * the subscription reports, until the request closes. `caller` keys the per-caller bound.
   */
  async stream(
    agent: ParseAgent,
    caller: string,
    className: string,
    res: ServerResponse,
  ): Promise<void> {
    const service = this.service;
    if (!service) {
      throw new NotFoundException(
        'Live counts need the liveQuery option of ParseAgentModule.forRoot (the classes Parse LiveQuery publishes).',
      );
    }
    if (!service.available) {
      throw new ServiceUnavailableException(
        'Live counts are unavailable: the LiveQuery server does not answer yet. Retry later.',
      );
    }
    // The page left while its agent was being made: nothing to start ('close' will not come again).
    if (res.destroyed) return;
    const held = this.streams.get(caller) ?? 0;
    if (held >= MAX_LIVE_STREAMS_PER_CALLER) {
      throw new HttpException(
        `This identity already watches ${MAX_LIVE_STREAMS_PER_CALLER} live counts; close other console pages first.`,
        429,
      );
    }
    this.streams.set(caller, held + 1);
    let session: LiveSession;
    try {
      session = await this.openSession(caller);
    } catch (error) {
      this.release(caller);
      throw httpRefusal(error);
    }
    let resource: ParsedResourceUri | undefined;
    let subscribing: Promise<void> = Promise.resolve();
    let stop = () => undefined as void;
    let closed = false;
    // Whenever the request ends, even while subscribing: once the subscribe settled, the
    // subscription and its session go (ending the session earlier would race the subscribe).
    res.once('close', () => {
      closed = true;
      stop();
      void subscribing
        .catch(() => undefined)
        .then(() => (resource ? service.unsubscribe(session, resource.uri) : false))
        .catch(() => undefined)
        .then(() => session.end())
        .catch(() => undefined)
        .finally(() => this.release(caller));
    });
    // The session ended elsewhere (expiry, shutdown, another node): so does the page's stream.
    session.ended$.pipe(take(1)).subscribe({ complete: () => res.end() });
    try {
      resource = parseResourceUri(`parse://${className}/count`);
      subscribing = service.subscribe(agent, session, resource);
      await subscribing;
    } catch (error) {
      throw httpRefusal(error);
    }
    if (closed) return;
    stop = this.serve(service, session, agent, resource, res);
  }

  /**
   * A session for one live stream: in the endpoint's SessionStore when there is one (its per-user
   * cap applies, keyed by the caller), else in this process.
   */
  protected async openSession(caller: string): Promise<LiveSession> {
    const store = this.sessions;
    if (!store) {
      const ended = new Subject<void>();
      return {
        id: `console:${randomBytes(12).toString('base64url')}`,
        ended$: ended.asObservable(),
        touch: () => Promise.resolve(!ended.closed),
        end: () => {
          ended.next();
          ended.complete();
          return Promise.resolve();
        },
      };
    }
    // Bound to an owner no request can present: only this stream uses the session.
    const owner = `console-live:${randomBytes(16).toString('base64url')}`;
    const created = await store.create(owner, { user: caller });
    return {
      id: created.id,
      ended$: created.ended$,
      touch: async () => (await store.get(created.id, owner)) !== undefined,
      end: async () => {
        await store.delete(created.id);
      },
    };
  }

  protected release(caller: string): void {
    const held = (this.streams.get(caller) ?? 1) - 1;
    if (held > 0) this.streams.set(caller, held);
    else this.streams.delete(caller);
  }

  /** The SSE response: the count at once and after every update; returns what stops it. */
  protected serve(
    service: ResourceSubscriptionService,
    session: LiveSession,
    agent: ParseAgent,
    resource: ParsedResourceUri,
    res: ServerResponse,
  ): () => void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write(': live count\n\n');
    const aborted = new AbortController();
    const send = (event: string, data: unknown) => {
      if (!res.writableEnded && !res.destroyed)
        res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const [tool, args] = resourceReadCall(resource);
    // One read at a time; changes during a read ask for one more afterwards.
    let reading = false;
    let again = false;
    const read = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const envelope = await agent.execute(tool, args, { signal: aborted.signal });
          if (aborted.signal.aborted) return;
          if (envelope.success) {
            const count = (envelope.data as { count?: unknown }).count;
            send('count', { class_name: resource.className, count, at: new Date().toISOString() });
          } else {
            send('problem', { message: envelope.error });
          }
        } while (again);
      } finally {
        reading = false;
      }
    };
    const refresh = () =>
      void read().catch((error: unknown) =>
        send('problem', { message: `The count could not be read: ${(error as Error)?.message}` }),
      );
    // Listening before the first read: a change while it runs is not missed.
    const stopListening = service.listen(session, agent, (notification) => {
      if (notification.method === 'notifications/resources/updated') refresh();
    });
    refresh();
    // The page watching is the session's use: it is touched well within its idle time.
    const idle = this.mcp?.sessionIdleTimeoutMs ?? Number.POSITIVE_INFINITY;
    const heartbeat = setInterval(
      () => {
        if (!res.writableEnded) res.write(': keep-alive\n\n');
        void session
          .touch()
          .then((alive) => {
            if (!alive) res.end();
          })
          .catch(() => undefined);
      },
      Math.max(100, Math.min(SSE_HEARTBEAT_MS, Math.floor(idle / 3))),
    );
    heartbeat.unref?.();
    return () => {
      clearInterval(heartbeat);
      aborted.abort('the console closed the live count');
      stopListening();
    };
  }
}

/**
 * Whom the per-caller bound counts a live stream against: the Parse user when the guards named
 * one, else the session token, else the caller as the page names it (the operator).
 */
export function liveCallerKey(caller: ConsoleCaller, agent: ParseAgent): string {
  if (caller.userId) return `user:${caller.userId}`;
  if (agent.sessionToken) return `token:${agent.sessionToken}`;
  return `${caller.kind}:${caller.label}`;
}

/** A refused subscription as the page is told: the reason, with the status that fits it. */
function httpRefusal(error: unknown): unknown {
  if (error instanceof HttpException) return error;
  // The node-wide cap, or LiveQuery not answering: try again later.
  if (error instanceof McpMethodError) return new ServiceUnavailableException(error.message);
  if (error instanceof StoreUnavailableError || error instanceof ParseRequestError)
    return new ServiceUnavailableException(error.message);
  if (error instanceof SessionLimitError) return new HttpException(error.message, 429);
  if (error instanceof AccessDeniedError) return new ForbiddenException(error.message);
  if (error instanceof ParseAgentError) return new BadRequestException(error.message);
  return error;
}
