import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { merge, map, type Subscription } from 'rxjs';
import { ParseAgentConfigError } from '../../core/errors';
import type { McpTransport, McpTransportContext } from '../../transport/shared/mcp-transport';
import { MCP_TRANSPORT_CONTEXT, MCP_TRANSPORTS } from '../parse-agent.constants';
import { MCP_LIST_CHANGES, type McpListChanges } from '../redis/redis.providers';

/**
 * Runs the module's MCP transports: starts each one on the shared context at bootstrap (before
 * the application listens), tells each one when the tool or prompt list changed (on any node,
 * with Redis), and closes them all before the application shuts down, each draining its calls.
 */
@Injectable()
export class McpTransportHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected changes?: Subscription;

  constructor(
    @Inject(MCP_TRANSPORTS) protected readonly transports: McpTransport[],
    @Inject(MCP_TRANSPORT_CONTEXT) protected readonly context: McpTransportContext,
    @Inject(MCP_LIST_CHANGES) protected readonly listChanges: McpListChanges,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const transport of this.transports) await transport.start(this.context);
    this.changes = merge(
      this.listChanges.tools$.pipe(map(() => 'tools' as const)),
      this.listChanges.prompts$.pipe(map(() => 'prompts' as const)),
    ).subscribe((kind) => {
      for (const transport of this.transports) transport.notifyListChanged?.(kind);
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.changes?.unsubscribe();
    await Promise.all(this.transports.map((transport) => transport.close()));
  }
}

/** `mcp.transports` as given: a list of McpTransport, else a fix-it error. */
export function extraTransports(value: unknown): McpTransport[] {
  if (value === undefined) return [];
  const isTransport = (t: unknown) => {
    const candidate = t as Partial<McpTransport> | null;
    return (
      typeof candidate === 'object' &&
      candidate !== null &&
      typeof candidate.kind === 'string' &&
      typeof candidate.start === 'function' &&
      typeof candidate.close === 'function'
    );
  };
  if (!Array.isArray(value) || !value.every(isTransport)) {
    throw new ParseAgentConfigError(
      'ParseAgentModule.forRoot extras.mcp: transports must be a list of McpTransport (objects with kind, start(context) and close()), e.g. [new StdioTransport({ agent: {} })].',
    );
  }
  return value as McpTransport[];
}
