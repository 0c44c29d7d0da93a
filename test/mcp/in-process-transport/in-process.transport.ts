import type { AgentOptions, McpTransport, ParseAgent } from 'nestjs-parse-agent';
import type { McpTransportContext } from 'nestjs-parse-agent/mcp';
import { lastValueFrom, toArray } from 'rxjs';

/** A JSON-RPC message as a caller in this process sends it. */
export interface InProcessMessage {
  jsonrpc: '2.0';
  id?: string | number;
  method: string;
  params?: Record<string, unknown>;
}

/**
 * A transport written against the public names only, as an application would write one: callers
 * in the same process hand it JSON-RPC objects and get the answers back. It owns no bytes; the
 * context gives it the agent (with the module's defaults), the rate-limit charge for listings,
 * and the dispatcher. Registered with one line: `mcp: { transports: [new InProcessTransport(o)] }`.
 */
export class InProcessTransport implements McpTransport {
  readonly kind = 'in-process';
  /** Every list change the host told this transport about, in order. */
  readonly listChanges: Array<'tools' | 'prompts'> = [];
  protected context?: McpTransportContext;
  protected agent?: ParseAgent;
  protected running = 0;
  protected closed = false;

  constructor(protected readonly options: AgentOptions) {}

  get callsInFlight(): number {
    return this.running;
  }

  async start(context: McpTransportContext): Promise<void> {
    this.context = context;
    const resolution = await context.agentFor(this.options);
    if (!resolution.agent)
      throw new Error(`in-process transport: no agent (${resolution.refused})`);
    this.agent = resolution.agent;
  }

  /** One request in, its JSON-RPC answer out (notifications on the way are dropped). */
  async request(message: InProcessMessage): Promise<Record<string, unknown>> {
    const { context, agent } = this;
    if (!context || !agent || this.closed) throw new Error('in-process transport: not running');
    const refused = await context.charge(agent, message.method);
    if (refused)
      return { jsonrpc: '2.0', id: message.id, error: { code: -32000, message: refused.message } };
    this.running++;
    try {
      const items = await lastValueFrom(
        context.dispatcher.dispatch(message, agent, { logger: context.logger }).pipe(toArray()),
      );
      const answer = items.find((item) => item.kind === 'response');
      return (answer?.message ?? {}) as Record<string, unknown>;
    } finally {
      this.running--;
    }
  }

  notifyListChanged(kind: 'tools' | 'prompts'): void {
    this.listChanges.push(kind);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
