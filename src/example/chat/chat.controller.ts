import {
  Body,
  Controller,
  Logger,
  Post,
  Req,
  Res,
  UseGuards,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  AgentUnauthorizedError,
  ParseAgentAuthGuard,
  ParseAgentFactory,
  principalOf,
  type AgentOptions,
} from 'nestjs-parse-agent';
import type { ConversationEvent } from 'nestjs-parse-agent/llm';
import type { Subscription } from 'rxjs';
import { agentOptionsFor } from '../auth/agent-factory';

const MAX_MESSAGE_LENGTH = 4000;

/**
 * `POST /chat { "message": "..." }`: one question answered by the configured language model with
 * the caller's own agent (same guard and identity mapping as /mcp), streamed as server-sent
 * events: `text`, `tool_call`, `tool_result`, then `done` (or `error`). Registered only when an
 * LLM provider is configured. Closing the connection cancels the question.
 */
@Controller()
@UseGuards(ParseAgentAuthGuard)
export class ChatController implements OnModuleDestroy {
  protected readonly logger = new Logger('DemoChat');
  protected readonly open = new Set<Subscription>();

  constructor(protected readonly agents: ParseAgentFactory) {}

  @Post('chat')
  chat(@Req() req: Request, @Res() res: Response, @Body() body: unknown): void {
    const message = (body as { message?: unknown } | undefined)?.message;
    if (typeof message !== 'string' || !message.trim() || message.length > MAX_MESSAGE_LENGTH) {
      res.status(400).json({
        error: `Send JSON { "message": "your question" } (1 to ${MAX_MESSAGE_LENGTH} characters).`,
      });
      return;
    }
    let options: AgentOptions;
    try {
      options = agentOptionsFor(req);
    } catch (error) {
      if (!(error instanceof AgentUnauthorizedError)) throw error;
      // Signed in but bound to no tenant: the reason names the fix (a tenant role membership).
      res.status(403).json({ error: error.message });
      return;
    }
    // The user the guard verified is named in the default system prompt (never the token).
    const principal = principalOf(req);
    const conversation = this.agents.conversation(
      options,
      principal?.kind === 'user'
        ? { user: { objectId: principal.userId, username: principal.username } }
        : {},
    );
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    const send = (event: string, data: unknown) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    const subscription = conversation.stream(message).subscribe({
      next: (event) => {
        const shaped = shape(event);
        if (shaped) send(shaped.event, shaped.data);
      },
      error: (error: unknown) => {
        // Provider errors can name internal endpoints or keys' owners: details stay in the log.
        this.logger.error(`chat failed: ${error instanceof Error ? error.message : String(error)}`);
        send('error', { message: 'The conversation failed; the server log has the details.' });
        res.end();
      },
      complete: () => res.end(),
    });
    this.open.add(subscription);
    subscription.add(() => this.open.delete(subscription));
    res.on('close', () => subscription.unsubscribe());
  }

  onModuleDestroy(): void {
    for (const subscription of [...this.open]) subscription.unsubscribe();
  }
}

function shape(event: ConversationEvent): { event: string; data: unknown } | undefined {
  switch (event.type) {
    case 'text':
      return { event: 'text', data: { text: event.text } };
    case 'tool_call':
      return { event: 'tool_call', data: { name: event.name, arguments: event.arguments } };
    case 'tool_result':
      return {
        event: 'tool_result',
        data: {
          name: event.name,
          success: event.success,
          duration_ms: event.durationMs,
          ...(event.result.success ? {} : { error: event.result.error }),
        },
      };
    case 'done':
      return {
        event: 'done',
        data: {
          text: event.result.text,
          finish_reason: event.result.finishReason,
          tool_calls: event.result.toolCalls.map((c) => c.name),
          usage: event.result.usage.toJSON(),
        },
      };
    default:
      return undefined;
  }
}
