import type { McpGuard } from '../mcp/mcp-endpoint-options';
import type { RateLimiter } from '../../ports/rate-limiter';

/** Who a request acts for, as the console shows it (never a token). */
export interface ConsoleCaller {
  kind: 'user' | 'operator' | 'unknown';
  /** What the page prints, e.g. "alice" or "operator". */
  label: string;
  userId?: string;
  tenantId?: string;
}

/**
 * `ParseAgentConsoleModule.forRoot(options)`: where the console is mounted and which host guards
 * protect its data. The console calls the agent the module's `agentFactory` gives for the request,
 * so it shows and runs exactly what an MCP client with the same credentials gets.
 */
export interface ParseAgentConsoleOptions {
  /** Mount path (default `/console`). The page is served at `<path>/`, its JSON at `<path>/api/`. */
  path?: string;
  /**
   * Host guards run before every data endpoint (the same ones as the MCP endpoint, e.g.
   * `[ParseAgentAuthGuard]`). Required: an empty list is refused at startup (fail closed).
   */
  guards: McpGuard[];
  /**
   * Whether the request is the operator's, who alone may watch the activity feed. Default: the
   * shipped guards identified the operator key (`principalOf(request).kind === 'operator'`).
   */
  isOperator?(request: unknown): boolean | Promise<boolean>;
  /**
   * Who the request acts for, as the page shows it. Default: the principal the shipped guards
   * put on the request (username and tenant, or the operator).
   */
  callerOf?(request: unknown): ConsoleCaller | undefined;
  /**
   * Who made a tool call or mutation seen on the activity feed. Called synchronously when the
   * library emits the event, inside the call, so request-scoped context (AsyncLocalStorage) is
   * current. Default: the caller of console requests; for other calls the agent's auth type.
   */
  actorOf?(): string | undefined;
  /**
   * Username/password sign-in through Parse Server's `/login` (default true). The page gets the
   * session token and presents it as a bearer token, which the host's guards then check.
   */
  signIn?: boolean;
  /** Bounds sign-in attempts per client address (recommended when signIn is on). */
  signInRateLimiter?: RateLimiter;
  /**
   * Checked before the host's guards on the API, sign-in and sign-out (key `mcp:<client ip>`, one
   * budget with the MCP endpoint); a refusal answers 429 and Parse is not asked. Default: the MCP
   * endpoint's `mcp.preAuthRateLimiter`, the same instance. `false` turns it off for the console.
   */
  preAuthRateLimiter?: RateLimiter | false;
  /** Activity events kept for a feed that opens later (default 200). */
  activityHistory?: number;
}

export interface ResolvedConsoleOptions extends Required<
  Pick<ParseAgentConsoleOptions, 'path' | 'guards' | 'signIn' | 'activityHistory'>
> {
  isOperator?: ParseAgentConsoleOptions['isOperator'];
  callerOf?: ParseAgentConsoleOptions['callerOf'];
  actorOf?: ParseAgentConsoleOptions['actorOf'];
  signInRateLimiter?: RateLimiter;
  preAuthRateLimiter?: RateLimiter | false;
}
