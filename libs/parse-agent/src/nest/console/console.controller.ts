import {
  BadRequestException,
  Body,
  Controller,
  ForbiddenException,
  Get,
  HttpCode,
  HttpException,
  Inject,
  Param,
  Post,
  Req,
  Res,
  ServiceUnavailableException,
  UnauthorizedException,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Type,
} from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { bearerTokenOf } from '../../auth/request-credentials';
import { ParseRequestError, RateLimitExceededError } from '../../core/errors';
import { ParseRestClient } from '../../data/parse-rest/parse-rest-client';
import type {
  ElicitationChannel,
  ElicitationRequest,
  ElicitationResult,
} from '../../ports/elicitation-channel';
import { checkRateLimit } from '../../ports/rate-limiter';
import { ConsoleActivity } from './console-activity';
import { ConsoleAgents } from './console-agents';
import { ConsolePreAuthGuard } from './console-pre-auth.guard';
import { consoleAsset } from './console-assets';
import { CONSOLE_OPTIONS } from './console.constants';
import type { ResolvedConsoleOptions } from './console-options';
import { consolePolicy } from './console-policy';

/** A platform response: Express's is a ServerResponse, Fastify's reply carries one as `raw`. */
type AnyResponse = ServerResponse | { raw: ServerResponse };
const rawOf = (res: AnyResponse): ServerResponse => ('raw' in res ? res.raw : res);
type AnyRequest = IncomingMessage & { originalUrl?: string; ip?: string };

const PAGE_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // The page runs only its own script; data is written as text, never parsed as HTML.
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const MAX_CREDENTIAL_LENGTH = 1024;
const SSE_HEARTBEAT_MS = 15_000;

/**
 * The console's two controllers for the configured path (route and guards are class metadata,
 * so they are built per configuration, like the MCP endpoint's): the page and sign-in, open to
 * anyone since they carry no data, and the JSON API behind the host's guards.
 */
export function createConsoleControllers(options: ResolvedConsoleOptions): Type<unknown>[] {
  @Controller(options.path)
  class ConsolePageController {
    constructor(
      @Inject(CONSOLE_OPTIONS) protected readonly options: ResolvedConsoleOptions,
      @Inject(ParseRestClient) protected readonly parse: ParseRestClient,
    ) {}

    @Get()
    page(@Req() req: AnyRequest, @Res() res: AnyResponse): void {
      const raw = rawOf(res);
      const url = req.originalUrl ?? req.url ?? '';
      const [pathname, query] = url.split('?', 2);
      if (!pathname.endsWith('/')) {
        // Relative links (console.js, api/...) resolve under the mount path, whatever the prefix.
        const last = pathname.slice(pathname.lastIndexOf('/') + 1);
        raw.writeHead(302, { Location: `${encodeURIComponent(last)}/${query ? `?${query}` : ''}` });
        raw.end();
        return;
      }
      send(raw, 'text/html; charset=utf-8', consoleAsset('index.html'));
    }

    @Get('console.js')
    script(@Res() res: AnyResponse): void {
      send(rawOf(res), 'text/javascript; charset=utf-8', consoleAsset('console.js'));
    }

    @Post('api/sign-in')
    @HttpCode(200)
    @UseGuards(ConsolePreAuthGuard)
    async signIn(@Req() req: AnyRequest, @Body() body: unknown) {
      if (!this.options.signIn) throw new ForbiddenException('Sign-in is turned off.');
      const { username, password } = (body ?? {}) as { username?: unknown; password?: unknown };
      if (
        typeof username !== 'string' ||
        typeof password !== 'string' ||
        !username ||
        !password ||
        username.length > MAX_CREDENTIAL_LENGTH ||
        password.length > MAX_CREDENTIAL_LENGTH
      ) {
        throw new BadRequestException('Send JSON { "username": "...", "password": "..." }.');
      }
      if (this.options.signInRateLimiter) {
        try {
          await checkRateLimit(
            this.options.signInRateLimiter,
            `console-sign-in:${req.ip ?? req.socket?.remoteAddress ?? 'unknown'}`,
            () => undefined,
          );
        } catch (error) {
          if (error instanceof RateLimitExceededError)
            throw new HttpException(
              `Too many sign-in attempts; try again in ${Math.ceil(error.retryAfter)} s.`,
              429,
            );
          throw error;
        }
      }
      try {
        const user = await this.parse.request<{ sessionToken?: string; username?: string }>(
          'POST',
          '/login',
          { username, password },
          { sessionToken: '' },
        );
        if (!user.sessionToken) throw new UnauthorizedException('Wrong username or password.');
        return { session_token: user.sessionToken, username: user.username ?? username };
      } catch (error) {
        if (error instanceof ParseRequestError) {
          if (error.parseCode === 101 || error.status === 404)
            throw new UnauthorizedException('Wrong username or password.');
          throw new ServiceUnavailableException('Parse Server could not check the sign-in.');
        }
        throw error;
      }
    }

    /** Ends the presented Parse session (the page's "Sign out"): Parse's /logout with that token. */
    @Post('api/sign-out')
    @HttpCode(204)
    @UseGuards(ConsolePreAuthGuard)
    async signOut(@Req() req: AnyRequest): Promise<void> {
      const token = bearerTokenOf(req.headers);
      if (!token)
        throw new BadRequestException('Send the session to end as Authorization: Bearer <token>.');
      try {
        await this.parse.request('POST', '/logout', {}, { sessionToken: token });
      } catch (error) {
        // An unknown or already-ended session is what signing out wants.
        if (error instanceof ParseRequestError && error.parseCode === 209) return;
        if (error instanceof ParseRequestError)
          throw new ServiceUnavailableException('Parse Server could not end the session.');
        throw error;
      }
    }
  }

  @Controller(`${options.path}/api`)
  @UseInterceptors(NoStoreInterceptor)
  class ConsoleApiController {
    constructor(
      @Inject(ConsoleAgents) protected readonly agents: ConsoleAgents,
      @Inject(ConsoleActivity) protected readonly activity: ConsoleActivity,
    ) {}

    /** Whom the agent acts for, its tier, tenant, filters and tools. */
    @Get('identity')
    async identity(@Req() req: AnyRequest) {
      const agent = await this.agents.agentFor(req);
      const operator = await this.agents.isOperator(req);
      const d = agent.describe();
      return {
        caller: this.agents.callerOf(req, agent),
        operator,
        agent: {
          permissions: d.permissions,
          auth: d.auth,
          tenant_id: d.tenant_id,
          client_mode: d.client_mode,
          allow_mutations: d.allow_mutations,
          confirmation_required: d.confirmation_required,
          classes: d.classes,
          tools: d.tools,
          methods: d.methods,
          filters: d.filters,
          strict_modes: d.strict_modes,
          // Class names an MCP client of a user never learns stay with the operator.
          ...(operator ? { hidden_classes: d.hidden_classes } : {}),
        },
      };
    }

    /** Per class and per tool: what this identity's agent may reach, and why not. */
    @Get('policy')
    async policy(@Req() req: AnyRequest) {
      const agent = await this.agents.agentFor(req);
      return consolePolicy(agent, this.agents.services, {
        operator: await this.agents.isOperator(req),
      });
    }

    /** The tools this identity may call, with their input schemas (what tools/list shows). */
    @Get('tools')
    async tools(@Req() req: AnyRequest) {
      const agent = await this.agents.agentFor(req);
      return agent.toolDefinitions().map((t) => ({
        name: t.name,
        title: t.title ?? t.annotations?.title,
        description: t.description,
        category: t.category,
        permission: t.permission,
        inputSchema: t.inputSchema,
        annotations: t.annotations,
      }));
    }

    /** Runs one tool as this identity: the agent's envelope, success or the error it would see. */
    @Post('tools/:name')
    async call(
      @Req() req: AnyRequest,
      @Res({ passthrough: true }) res: AnyResponse,
      @Param('name') name: string,
      @Body() body: unknown,
    ) {
      const { arguments: args = {}, confirm } = (body ?? {}) as {
        arguments?: unknown;
        confirm?: unknown;
      };
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw new BadRequestException('Send JSON { "arguments": { ... } } (an object).');
      const confirmed = (confirm as { message?: unknown } | undefined)?.message;
      if (confirm !== undefined && typeof confirmed !== 'string')
        throw new BadRequestException(
          'confirm must be { "message": "<the question the console showed>" }, sent after the person agreed.',
        );
      const agent = await this.agents.agentFor(req);
      this.activity.remember(agent.agentId, this.agents.callerOf(req, agent).label);
      const raw = rawOf(res);
      const abort = new AbortController();
      const onClose = () => {
        if (!raw.writableFinished) abort.abort('client disconnected');
      };
      raw.on('close', onClose);
      const confirmation = new ConsoleConfirmation(confirmed as string | undefined);
      try {
        const envelope = await agent.execute(name, args as Record<string, unknown>, {
          signal: abort.signal,
          elicitation: confirmation,
        });
        // Not yet confirmed: the page shows the agent's question; running again with it answers.
        return confirmation.pending
          ? { ...envelope, confirmation: confirmation.pending }
          : envelope;
      } finally {
        raw.off('close', onClose);
      }
    }

    /** The operator's live feed of tool calls and mutations, as server-sent events. */
    @Get('activity')
    async feed(@Req() req: AnyRequest, @Res() res: AnyResponse): Promise<void> {
      // The request's agent first: a caller the agentFactory refuses is refused here too.
      await this.agents.agentFor(req);
      if (!(await this.agents.isOperator(req)))
        throw new ForbiddenException('The activity feed is for the operator only.');
      const raw = rawOf(res);
      raw.writeHead(200, {
        'Content-Type': 'text/event-stream',
        'Cache-Control': 'no-store',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
      });
      raw.write(': activity feed\n\n');
      // `live` marks the end of the replayed history: what follows happened while watching.
      const live = () => raw.write('event: live\ndata: {}\n\n');
      const subscription = this.activity.feed(live).subscribe({
        next: (entry) => raw.write(`event: activity\ndata: ${JSON.stringify(entry)}\n\n`),
        complete: () => raw.end(),
      });
      const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), SSE_HEARTBEAT_MS);
      heartbeat.unref?.();
      raw.on('close', () => {
        clearInterval(heartbeat);
        subscription.unsubscribe();
      });
    }
  }
  // The pre-auth limit first: an anonymous flood is refused before a host guard asks Parse.
  UseGuards(ConsolePreAuthGuard, ...options.guards)(ConsoleApiController);
  return [ConsolePageController, ConsoleApiController];
}

/** Answers about an identity are never cached (by the browser or a proxy). */
class NoStoreInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    const res = context.switchToHttp().getResponse<AnyResponse>();
    const raw = rawOf(res);
    if (!raw.headersSent) raw.setHeader('Cache-Control', 'no-store');
    return next.handle();
  }
}

function send(res: ServerResponse, type: string, body: Buffer): void {
  res.writeHead(200, { ...PAGE_HEADERS, 'Content-Type': type, 'Content-Length': body.length });
  res.end(body);
}

/**
 * The console's answer to a tool's confirmation question (MCP elicitation). The first run asks:
 * the question is kept and the call is not confirmed (the tool refuses, nothing changes). The page
 * shows it; when the person agrees it runs again naming that question, and only that exact
 * question is accepted, so changed arguments ask again.
 */
class ConsoleConfirmation implements ElicitationChannel {
  pending?: { message: string };

  constructor(protected readonly confirmedMessage: string | undefined) {}

  async elicit(request: ElicitationRequest): Promise<ElicitationResult> {
    if (this.confirmedMessage !== undefined && this.confirmedMessage === request.message)
      return { action: 'accept', content: { confirm: true } };
    this.pending = { message: request.message };
    return { action: 'cancel' };
  }
}
