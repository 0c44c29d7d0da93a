import type { Readable, Writable } from 'node:stream';
import type { AgentOptions, ParseAgent } from '../../agent/parse-agent';
import { ParseAgentConfigError } from '../../core/errors';
import type { JsonRpcId } from '../../mcp/mcp-dispatcher.types';
import { stringifyJsonRpc } from '../../mcp/preserialized';
import { JSON_RPC_ERROR_CODES } from '../../mcp/protocol.constants';
import { InMemoryCancellationBus } from '../../ports/in-memory-cancellation-bus';
import { parseBoundedJson } from '../shared/bounded-json';
import { CallsInFlight, openCall } from '../shared/calls-in-flight';
import { readLines, type LineReader } from '../shared/line-framing';
import {
  dispatchCall,
  errorClassName,
  type McpCallContext,
  type McpTransport,
  type McpTransportContext,
} from '../shared/mcp-transport';

/** A StdioTransport's settings: its agent, its streams, and limits of its own if needed. */
export interface StdioTransportOptions {
  /**
   * The one agent every message runs as (a stdio server has a single client): an agent, or its
   * options, built when the transport starts through the host's factory (module defaults applied).
   */
  agent: AgentOptions | ParseAgent;
  /** Default process.stdin. */
  input?: Readable;
  /** Only JSON-RPC goes here, one message per line. Default process.stdout. */
  output?: Writable;
  /** Diagnostics; never written to `output`. Default: stderr (never the host's logger, which may write to stdout). */
  log?: (line: string) => void;
  /** Longest accepted line in bytes (default: the host's message limit, 1 MiB). */
  maxLineBytes?: number;
  /** Deepest accepted JSON nesting (default: the host's, 20). */
  maxJsonDepth?: number;
}

/** A stdio server has one client: all its calls share one cancellation scope. */
const STDIO_SCOPE = 'stdio';

const LIST_CHANGED = {
  tools: { jsonrpc: '2.0', method: 'notifications/tools/list_changed' },
  prompts: { jsonrpc: '2.0', method: 'notifications/prompts/list_changed' },
} as const;

/**
 * MCP over stdio: newline-delimited JSON-RPC in, the dispatcher's messages out, one per line. The
 * transport owns bytes and framing only; what a message may do is the dispatcher's and the agent's
 * business. Requests run concurrently, `notifications/cancelled` reaches one in flight (through a
 * cancellation bus of its own: its one client is here, never on another node), the methods the
 * agent does not charge itself are charged here, and nothing but JSON-RPC is ever written to the
 * output. Register it with `mcp: { transports: [new StdioTransport({ agent })] }`, or run it
 * without Nest with `serveMcpOverStdio`.
 */
export class StdioTransport implements McpTransport {
  readonly kind = 'stdio';
  /** Resolves when the input ended (or close() was called) and every call in flight answered. */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly log: (line: string) => void;
  private readonly calls = new CallsInFlight();
  private call?: McpCallContext;
  private context?: McpTransportContext;
  private agent?: ParseAgent;
  private lines?: LineReader;
  private maxJsonDepth = 0;
  private ended = false;
  /** Whether the client initialized: list changes are sent only then. */
  private initialized = false;

  constructor(private readonly options: StdioTransportOptions) {
    this.input = options.input ?? process.stdin;
    this.output = options.output ?? process.stdout;
    this.log = options.log ?? ((line) => process.stderr.write(`[parse-agent] ${line}\n`));
    this.closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));
  }

  /** Calls running now. */
  get callsInFlight(): number {
    return this.calls.size;
  }

  /** Builds the agent (a refusal rejects, naming why), then reads the input. */
  async start(context: McpTransportContext): Promise<void> {
    if (this.context) throw new ParseAgentConfigError('This stdio transport was started twice.');
    this.context = context;
    const resolution = await context.agentFor(this.options.agent);
    if (!resolution.agent) {
      this.ended = true;
      this.resolveClosed();
      throw new ParseAgentConfigError(
        `The stdio transport could not build its agent (${resolution.refused}: ${errorClassName(resolution.error)}).`,
      );
    }
    this.agent = resolution.agent;
    this.call = {
      dispatcher: context.dispatcher,
      cancellations: new InMemoryCancellationBus(),
      calls: this.calls,
      dispatchLogger: { error: (message) => this.log(message), warn: (m) => this.log(m) },
    };
    const maxLineBytes = this.options.maxLineBytes ?? context.limits.maxMessageBytes;
    this.maxJsonDepth = this.options.maxJsonDepth ?? context.limits.maxJsonDepth;
    this.lines = readLines(this.input, {
      maxLineBytes,
      onLine: (line) => this.handleLine(line),
      onTooLong: () => {
        this.log(`dropped a message longer than ${maxLineBytes} bytes`);
        this.writeError(
          null,
          JSON_RPC_ERROR_CODES.invalidRequest,
          `Message too large: over ${maxLineBytes} bytes`,
        );
      },
      onEnd: () => {
        this.ended = true;
        this.maybeClosed();
      },
    });
  }

  /** Stops reading, cancels calls in flight and resolves `closed`. */
  async close(): Promise<void> {
    if (!this.lines) {
      this.ended = true;
      this.resolveClosed();
    }
    this.lines?.end();
    this.calls.abortAll('transport_closed');
    await this.closed;
  }

  /** Writes `notifications/<kind>/list_changed`, once the client has initialized. */
  notifyListChanged(kind: 'tools' | 'prompts'): void {
    if (this.initialized && !this.ended) this.write(LIST_CHANGED[kind]);
  }

  private write(message: unknown): void {
    if (this.output.writable) this.output.write(stringifyJsonRpc(message) + '\n');
  }

  private writeError(id: JsonRpcId, code: number, message: string): void {
    this.write({ jsonrpc: '2.0', id, error: { code, message } });
  }

  private maybeClosed(): void {
    if (this.ended && this.calls.size === 0) this.resolveClosed();
  }

  private handleLine(line: string): void {
    if (!line.trim()) return;
    const parsed = parseBoundedJson(line, this.maxJsonDepth);
    if (!parsed.ok) return this.writeError(null, JSON_RPC_ERROR_CODES.parseError, 'Parse error');
    const body = parsed.value as Record<string, unknown>;
    const isObject = body !== null && typeof body === 'object';
    if (isObject && body.method === 'notifications/cancelled') {
      const requestId = (body.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof requestId === 'string' || typeof requestId === 'number') {
        void this.call!.cancellations.cancel(STDIO_SCOPE, requestId, 'notifications_cancelled');
      }
    }
    if (isObject && body.method === 'notifications/initialized') this.initialized = true;
    const requestId =
      isObject && typeof body.method === 'string' && 'id' in body
        ? (body.id as JsonRpcId)
        : undefined;
    const charging =
      requestId === undefined ? undefined : this.context!.charge(this.agent!, body.method);
    if (!charging) return this.run(body, requestId);
    // Held as a call meanwhile, so the end of input waits for it.
    const untrack = this.calls.track(new AbortController());
    charging
      .then(
        (refused) => {
          if (refused) this.writeError(requestId ?? null, -32000, refused.message);
          else this.run(body, requestId);
        },
        (error: unknown) => {
          this.log(`rate limiter failure: ${errorClassName(error)}`);
          this.writeError(requestId ?? null, JSON_RPC_ERROR_CODES.internalError, 'Internal error');
        },
      )
      .finally(() => {
        untrack();
        this.maybeClosed();
      });
  }

  /** Runs one message; a cancel (or close) unsubscribes it, and the dispatcher sends no more. */
  private run(body: Record<string, unknown>, requestId: JsonRpcId | undefined): void {
    const call = this.call!;
    const running = openCall({
      calls: call.calls,
      cancellations: call.cancellations,
      scope: requestId === undefined ? undefined : STDIO_SCOPE,
      requestId: requestId ?? null,
    });
    const finish = () => {
      running.release();
      this.maybeClosed();
    };
    const subscription = dispatchCall(call, body, this.agent!, {
      logger: call.dispatchLogger,
    }).subscribe({
      next: (item) => {
        if (item.kind === 'notification' || item.kind === 'response') this.write(item.message);
      },
      complete: finish,
    });
    if (subscription.closed) return;
    subscription.add(finish);
    running.controller.signal.addEventListener('abort', () => subscription.unsubscribe(), {
      once: true,
    });
  }
}
