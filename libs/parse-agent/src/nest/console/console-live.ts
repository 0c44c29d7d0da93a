import {
  BadRequestException,
  ForbiddenException,
  HttpException,
  Inject,
  Injectable,
  NotFoundException,
  Optional,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { hash, randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Subject, take, type Observable } from 'rxjs';
import type { ParseAgent } from '../../agent/parse-agent';
import type { ParseAgentModuleOptions } from '../../composition/parse-agent-options.interface';
import { principalUserKey } from '../../auth/principal-user-key';
import type { AgentIdentity } from '../../core/agent-identity';
import {
  AccessDeniedError,
  AgentUnauthorizedError,
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
import { ParseRestClient } from '../../data/parse-rest/parse-rest-client';
import type { ResolvedMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';
import type { McpRequest } from '../../transport/http/mcp-request';
import { UserKeys, UserUnresolvedError } from '../../transport/shared/user-key';
import { MCP_ENDPOINT_OPTIONS } from '../parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from '../parse-agent.module-definition';

const SSE_HEARTBEAT_MS = 15_000;
/** Live counts one identity may watch at once (pages and tabs together). */
export const MAX_LIVE_STREAMS_PER_CALLER = 8;

/** Whom a live stream counts against (see ConsoleLive.callerOf): opaque digests only. */
export interface LiveCaller {
  /** The MCP per-user key: the store session's user. */
  user: string;
  /** That user in the agent's tenant: keys the bound of live counts watched at once. */
  slot: string;
}

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
  /** Open live streams per caller (`LiveCaller.slot`). */
  protected readonly streams = new Map<string, number>();
  /** Session tokens to their user's key, as the MCP endpoint resolves them (`/users/me`). */
  protected readonly userKeys: UserKeys;

  constructor(
    @Inject(McpDispatcher) protected readonly dispatcher: McpDispatcher,
    @Inject(PARSE_AGENT_MODULE_OPTIONS) protected readonly moduleOptions: ParseAgentModuleOptions,
    @Optional() @Inject(SessionStore) protected readonly sessions?: SessionStore,
    @Optional() @Inject(MCP_ENDPOINT_OPTIONS) protected readonly mcp?: ResolvedMcpEndpointOptions,
    @Optional() @Inject(ParseRestClient) parse?: ParseRestClient,
  ) {
    this.userKeys = new UserKeys(async (sessionToken) => {
      if (!parse) throw new UserUnresolvedError();
      const me = await parse.request<{ objectId?: string }>('GET', '/users/me', undefined, {
        sessionToken,
      });
      return me.objectId ?? '';
    });
  }

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
   * Whom a live stream counts against, as opaque digests (never a session token): `user` is the
   * key the MCP endpoint counts a user's sessions by (`mcp.userKey`, else the Parse user the shipped
   * guards found, else the agent's user, role or the operator), so console and MCP sessions share
   * one `mcp.maxSessionsPerUser`; `slot` is that user in the agent's tenant, for the bound of
   * live counts one identity watches at once. 401 when Parse rejects the session token, 503 when
   * it cannot say whose it is.
   */
  async callerOf(request: unknown, agent: AgentIdentity): Promise<LiveCaller> {
    let user: string;
    try {
      const own = await this.mcp?.userKey?.(request as McpRequest, agent as ParseAgent);
      const hostKey = typeof own === 'string' && own ? own : principalUserKey(request, agent);
      user = hostKey !== undefined ? UserKeys.ofHostKey(hostKey) : await this.userKeys.of(agent);
    } catch (error) {
      if (error instanceof AgentUnauthorizedError) throw new UnauthorizedException();
      if (error instanceof UserUnresolvedError)
        throw new ServiceUnavailableException(error.message);
      throw error;
    }
    return { user, slot: hash('sha256', `${user}\u0000${agent.tenantId ?? ''}`, 'base64url') };
  }

  /**
   * Subscribes the agent to the class's count (refusals are HTTP errors before anything is
   * written), then streams `event: count` on `res`: the count now, and again after every change
   * the subscription reports, until the request closes. `caller.slot` keys the per-caller bound.
   */
  async stream(
    agent: ParseAgent,
    caller: LiveCaller,
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
    const held = this.streams.get(caller.slot) ?? 0;
    if (held >= MAX_LIVE_STREAMS_PER_CALLER) {
      throw new HttpException(
        `This identity already watches ${MAX_LIVE_STREAMS_PER_CALLER} live counts; close other console pages first.`,
        429,
      );
    }
    this.streams.set(caller.slot, held + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.release(caller.slot);
    };
    let resource: ParsedResourceUri | undefined;
    let subscribing: Promise<void> = Promise.resolve();
    let stop = () => undefined as void;
    let closed = false;
    const opening = this.openSession(caller.user);
    // Registered before the first await: the page may leave while its session is being opened.
    // Whenever the request ends, the subscription and the session go once the subscribe settled
    // (ending the session earlier would race the subscribe), and the caller's place is freed.
    res.once('close', () => {
      closed = true;
      stop();
      void opening
        .then(async (session) => {
          await subscribing.catch(() => undefined);
          if (resource) await service.unsubscribe(session, resource.uri).catch(() => undefined);
          await session.end();
        })
        .catch(() => undefined)
        .finally(release);
    });
    let session: LiveSession;
    try {
      session = await opening;
    } catch (error) {
      release();
      throw httpRefusal(error);
    }
    // The page left while the session was opened: the close handler ends it.
    if (closed || res.destroyed || res.writableEnded) return;
    // The session ended elsewhere (expiry, shutdown, another node): so does the page's stream.
    session.ended$.pipe(take(1)).subscribe({ complete: () => res.end() });
    try {
      resource = parseResourceUri(`parse://${className}/count`);
      subscribing = service.subscribe(agent, session, resource);
      await subscribing;
    } catch (error) {
      throw httpRefusal(error);
    }
    if (closed || res.destroyed || res.writableEnded) return;
    stop = this.serve(service, session, agent, resource, res);
  }

  /**
   * A session for one live stream: in the endpoint's SessionStore when there is one (its per-user
   * cap applies, counted against `user`, the MCP per-user key), else in this process.
   */
  protected async openSession(user: string): Promise<LiveSession> {
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
    const created = await store.create(owner, { user });
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
    // A re-read that finds the same number is not news (an update that left the count alone, or
    // the re-read notice a stream gets when it attaches): the page hears of changes only.
    let shown: { count: unknown } | undefined;
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
            if (shown && shown.count === count) continue;
            shown = { count };
            send('count', { class_name: resource.className, count, at: new Date().toISOString() });
          } else {
            shown = undefined;
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
