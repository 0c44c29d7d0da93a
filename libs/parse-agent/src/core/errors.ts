/**
 * Every error the library raises extends ParseAgentError. Each carries the wire `error_code` it maps
 * to, so execute() can turn any of them into the envelope in one place.
 */
export abstract class ParseAgentError extends Error {
  abstract readonly errorCode: string;
  /**
   * Set (by `quotingUntrusted`) when the message is text the library did not write: an
   * application's agent method, Parse Server. Such text can quote stored values, so the failure
   * envelope encloses it as untrusted data after this lead-in, which the library wrote.
   */
  untrustedLead?: string;
  constructor(message: string) {
    super(message);
    this.name = this.constructor.name;
  }
  /** Extra wire fields for the failure envelope (`details`), or undefined. */
  get details(): Record<string, unknown> | undefined {
    return undefined;
  }
}

/**
 * Marks an error whose message the library did not write (see `untrustedLead`) and returns it. An
 * error marked already keeps its lead-in: the innermost source names the text best.
 */
export function quotingUntrusted<E extends ParseAgentError>(error: E, lead: string): E {
  error.untrustedLead ??= lead;
  return error;
}

/**
 * A shared store (sessions on Redis, say) cannot be reached: the request is refused rather than
 * served unchecked. The HTTP layer answers 503 with a Retry-After.
 */
export class StoreUnavailableError extends ParseAgentError {
  readonly errorCode = 'store_unavailable';
  constructor(
    readonly store: string,
    readonly retryAfter: number,
  ) {
    super(`${store} unavailable: its Redis store cannot be reached. Retry after ${retryAfter}s.`);
  }
}

/** A configuration or registration mistake by the developer (bad options, misused decorator). */
export class ParseAgentConfigError extends ParseAgentError {
  readonly errorCode = 'invalid_configuration';
}

export type AccessDeniedKind =
  | 'hidden_class'
  | 'class_not_found'
  | 'class_filter'
  | 'field_denied'
  | 'storage_form_field_ref'
  | 'clp_denied'
  | 'acl_denied'
  | 'tenant_scope'
  | 'internal_field'
  | 'unreadable_pointer'
  | 'confirmation_declined'
  | 'confirmation_unavailable'
  | 'approval_declined'
  | 'approval_unavailable'
  | 'approval_timeout'
  | 'approval_cancelled'
  | 'prompt_injection'
  | 'hook_refused';

export interface AccessDeniedDetails {
  kind?: AccessDeniedKind;
  deniedField?: string;
  allowedFields?: string[];
  suggestedRewrite?: string;
}

/** The agent may not see this class, field or row. `kind` says which boundary refused. */
export class AccessDeniedError extends ParseAgentError {
  readonly errorCode = 'access_denied';
  readonly kind?: AccessDeniedKind;
  constructor(
    message: string,
    readonly info: AccessDeniedDetails = {},
  ) {
    super(message);
    this.kind = info.kind;
  }
  override get details(): Record<string, unknown> | undefined {
    const out: Record<string, unknown> = {};
    if (this.info.kind) out.kind = this.info.kind;
    if (this.info.deniedField) out.denied_field = this.info.deniedField;
    if (this.info.allowedFields) out.allowed_fields = this.info.allowedFields;
    if (this.info.suggestedRewrite) out.suggested_rewrite = this.info.suggestedRewrite;
    return Object.keys(out).length ? out : undefined;
  }
}

/** Arguments that do not fit the tool (wire: `invalid_argument`). */
export class AgentValidationError extends ParseAgentError {
  readonly errorCode = 'invalid_argument';
}

/**
 * A value given for a pointer field that is not a pointer to the field's class: another class, or
 * a malformed value (no objectId, a number, an object without `__type: 'Pointer'`). Refused before
 * it reaches Parse, where it would match nothing and read as a real empty answer.
 */
export class PointerShapeError extends ParseAgentError {
  readonly errorCode = 'pointer_shape_mismatch';
  constructor(
    message: string,
    readonly field: string,
    readonly expectedClass: string,
  ) {
    super(message);
  }
  override get details(): Record<string, unknown> {
    return { field: this.field, expected_class: this.expectedClass };
  }
}

/** A `where` the agent refuses to run: unknown or code-executing operators, too deep, not an object. */
export class InvalidQueryError extends ParseAgentError {
  readonly errorCode = 'invalid_query';
}

/**
 * A field name the class does not have (`kind: unknown_field`), told apart from a denied one. Only
 * raised where the agent may see every field of the class, so it never confirms a hidden field;
 * `suggestions` come from the fields the agent can see.
 */
export class UnknownFieldError extends InvalidQueryError {
  constructor(
    message: string,
    readonly field: string,
    readonly suggestions: string[] = [],
  ) {
    super(message);
  }
  override get details(): Record<string, unknown> {
    return { kind: 'unknown_field', field: this.field, suggestions: this.suggestions };
  }
}

/** A constraint that would leak internals (credential columns, ReDoS-prone regexes). */
export class SecurityBlockedError extends ParseAgentError {
  readonly errorCode = 'security_blocked';
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
  }
}

export class PermissionDeniedError extends ParseAgentError {
  readonly errorCode = 'permission_denied';
}

/**
 * No tool of that name is available to the agent (wire: `unknown_tool`), told apart from a tool
 * its tier or filters refuse. `suggestions` are close names among the tools it may call only.
 */
export class UnknownToolError extends ParseAgentError {
  readonly errorCode = 'unknown_tool';
  constructor(
    message: string,
    readonly toolName: string,
    readonly suggestions: string[] = [],
  ) {
    super(message);
  }
  override get details(): Record<string, unknown> {
    return { kind: 'unknown_tool', suggestions: this.suggestions };
  }
}

export class ToolFilteredError extends ParseAgentError {
  readonly errorCode = 'tool_filtered';
}

export class RateLimitExceededError extends ParseAgentError {
  readonly errorCode = 'rate_limited';
  constructor(
    readonly retryAfter: number,
    readonly limit: number,
    readonly window: number,
    message = `Rate limit exceeded (${limit} requests per ${window}s). Retry after ${retryAfter.toFixed(1)}s`,
  ) {
    super(message);
  }
}

/**
 * The rate limiter cannot count calls right now (its store, Redis say, is unreachable or stalled,
 * or the limiter itself failed), so calls are refused rather than run uncounted. Not "too many
 * requests": the HTTP transport answers 503 with a Retry-After. Still a `rate_limited` refusal in
 * the tool envelope (with `details.kind: 'limiter_unavailable'`), so in-process callers back off
 * the same way.
 */
export class RateLimiterUnavailableError extends RateLimitExceededError {
  constructor(
    retryAfter: number,
    limit: number,
    window: number,
    message = `Rate limiter unavailable (it could not count this call), so calls are refused for now. Retry after ${retryAfter.toFixed(1)}s`,
  ) {
    super(retryAfter, limit, window, message);
  }
  override get details(): Record<string, unknown> {
    return { kind: LIMITER_UNAVAILABLE };
  }
}

/** `details.kind` of a refusal because the rate limiter cannot count (see RateLimiterUnavailableError). */
export const LIMITER_UNAVAILABLE = 'limiter_unavailable';

export class RecursionLimitExceededError extends ParseAgentError {
  readonly errorCode = 'recursion_limit_exceeded';
  constructor(readonly depth: number) {
    super(
      `Sub-agent recursion limit reached (depth ${depth}): this agent may not create further sub-agents.`,
    );
  }
}

export class ToolTimeoutError extends ParseAgentError {
  readonly errorCode = 'timeout';
  constructor(
    readonly toolName: string,
    readonly seconds: number,
  ) {
    super(
      `Tool '${toolName}' timed out after ${seconds} seconds. Narrow the where filter, lower the limit, or query an indexed field.`,
    );
  }
}

/**
 * No object with that objectId for this agent (wire: `not_found`): it does not exist, or the
 * agent's filters, canonical filter or Parse's ACL hide it. The two read the same on purpose, so
 * a missing answer tells nothing about rows the agent cannot see.
 */
export class ObjectNotFoundError extends ParseAgentError {
  readonly errorCode = 'not_found';
  constructor(
    readonly className: string,
    readonly objectId: string,
  ) {
    super(`Object not found: ${className}#${objectId}`);
  }
}

/** Parse Server answered with an error. */
export class ParseRequestError extends ParseAgentError {
  readonly errorCode = 'parse_error';
  constructor(
    message: string,
    readonly parseCode?: number,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The call was cancelled by the client (notification, disconnect or an aborted signal). */
export class AgentCancelledError extends ParseAgentError {
  readonly errorCode = 'cancelled';
  constructor(readonly reason?: string) {
    super(reason ? `Cancelled by client (${reason})` : 'Cancelled by client');
  }
}

/** The HTTP layer refuses the request: maps to the fixed 401 body, never echoing the reason. */
export class AgentUnauthorizedError extends ParseAgentError {
  readonly errorCode = 'unauthorized';
  readonly reason?: string;
  constructor(message = 'Unauthorized', options: { reason?: string } = {}) {
    super(message);
    this.reason = options.reason;
  }
}
