import {
  BadRequestException,
  Body,
  ForbiddenException,
  Get,
  Inject,
  Param,
  Post,
  Req,
  Res,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { consolePolicy } from '../../console/console-policy';
import { ConsoleActivity } from './console-activity';
import { ConsoleAgents } from './console-agents';
import { ConsoleConfirmation } from './console-confirmation';
import { rawOf, type AnyRequest, type AnyResponse } from './console-http';
import { ConsoleLive } from './console-live';

const SSE_HEARTBEAT_MS = 15_000;

/** Answers about an identity are never cached (by the browser or a proxy). */
class NoStoreInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    const res = context.switchToHttp().getResponse<AnyResponse>();
    const raw = rawOf(res);
    if (!raw.headersSent) raw.setHeader('Cache-Control', 'no-store');
    return next.handle();
  }
}

/**
 * The console's JSON API, as the caller's agent answers it: identity, policy, tools, running a
 * tool, and the operator's activity feed. Its route and the host's guards are set per
 * configuration by createConsoleControllers.
 */
@UseInterceptors(NoStoreInterceptor)
export class ConsoleApiRoutes {
  constructor(
    @Inject(ConsoleAgents) protected readonly agents: ConsoleAgents,
    @Inject(ConsoleActivity) protected readonly activity: ConsoleActivity,
    @Inject(ConsoleLive) protected readonly live: ConsoleLive,
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
      return confirmation.pending ? { ...envelope, confirmation: confirmation.pending } : envelope;
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

  /** Whether live counts are on (the `liveQuery` option) and the classes this identity may count. */
  @Get('live')
  async liveInfo(@Req() req: AnyRequest) {
    return this.live.info(await this.agents.agentFor(req));
  }

  /** This identity's count of one class as server-sent events, sent again whenever it changes. */
  @Get('live/:className')
  async liveCount(
    @Req() req: AnyRequest,
    @Res() res: AnyResponse,
    @Param('className') className: string,
  ): Promise<void> {
    const agent = await this.agents.agentFor(req);
    const caller = await this.live.callerOf(req, agent);
    await this.live.stream(agent, caller, className, rawOf(res));
  }
}
