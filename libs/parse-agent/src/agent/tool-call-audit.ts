import type { AgentIdentity } from '../core/agent-identity';
import type { ToolCallEvent } from '../core/agent-events';
import type { ToolEnvelope } from '../core/envelope';
import { isPlainObject } from '../core/plain-object';
import type { Where } from '../query/constraint-translator';
import type { NormalizedListFilter } from '../security/class-filter';
import { estimatedCostUsd } from './agent-observability';

/** Argument names whose values (and, for some, names) never reach events or logs. */
export const SENSITIVE_ARGUMENT_KEYS: ReadonlySet<string> = new Set([
  'where',
  'pipeline',
  'session_token',
  'password',
  'secret',
  'token',
  'auth_data',
  'authData',
  'recovery_codes',
  'api_key',
  'master_key',
  'acl_user',
  'acl_role',
  'ids',
  'keys',
  'include',
  'arguments',
]);

export interface ToolCallAuditInput {
  agent: AgentIdentity & {
    readonly agentDepth: number;
    readonly parentAgentId?: string;
    readonly correlationId?: string;
    readonly impersonation?: { readonly user: string; readonly label?: string };
  };
  toolName: string;
  args: Record<string, unknown>;
  envelope: ToolEnvelope;
  durationMs: number;
  filters: {
    classes?: NormalizedListFilter;
    tools?: NormalizedListFilter;
    methods?: NormalizedListFilter;
  };
  agentFilters: Readonly<Record<string, Where>>;
  /** What the call failed with (for error_class); absent on success. */
  error?: unknown;
  /** USD per million input tokens: prices est_input_tokens as est_cost_usd when set. */
  inputTokenCostPerMillion?: number;
  /** What the call spent on embeddings. */
  embeddings?: { calls: number; tokens: number; costUsd?: number };
}

/** The audit event of one tool call: who, what and how it went; never argument or filter values. */
export function buildToolCallEvent(input: ToolCallAuditInput): ToolCallEvent {
  const { agent, envelope } = input;
  const event: ToolCallEvent = {
    tool: input.toolName,
    args_keys: Object.keys(input.args).filter((k) => !SENSITIVE_ARGUMENT_KEYS.has(k)),
    auth_type: agent.authType,
    using_master_key: agent.usingMasterKey,
    permissions: agent.permissions,
    agent_id: agent.agentId,
    agent_depth: agent.agentDepth,
    success: envelope.success,
    duration_ms: input.durationMs,
  };
  if (agent.correlationId) event.correlation_id = agent.correlationId;
  if (agent.parentAgentId) event.parent_agent_id = agent.parentAgentId;
  const cls = describeFilter(input.filters.classes);
  if (cls.only) event.classes_only = cls.only;
  if (cls.except?.length) event.classes_except = cls.except;
  const tools = describeFilter(input.filters.tools);
  if (tools.only) event.tools_only = tools.only;
  if (tools.except?.length) event.tools_except = tools.except;
  const methods = describeFilter(input.filters.methods);
  if (methods.only) event.methods_only = methods.only;
  if (methods.except?.length) event.methods_except = methods.except;
  if (Object.keys(input.agentFilters).length) {
    event.filters = Object.fromEntries(
      Object.entries(input.agentFilters).map(([k, w]) => [k, fieldNames(w)]),
    );
  }
  if (agent.tenantId) event.tenant_scoped = true;
  if (agent.impersonation) {
    event.impersonated_user = agent.impersonation.user;
    if (agent.impersonation.label) event.impersonation_label = agent.impersonation.label;
  }
  if (input.embeddings) {
    event.embedding_calls = input.embeddings.calls;
    event.embedding_tokens = input.embeddings.tokens;
    if (input.embeddings.costUsd !== undefined) {
      event.embedding_cost_usd = input.embeddings.costUsd;
    }
  }
  if (envelope.success) {
    const size = Buffer.byteLength(JSON.stringify(envelope.data) ?? '', 'utf8');
    event.result_size = size;
    event.est_input_tokens = Math.floor(size / 4);
    const cost = estimatedCostUsd(event.est_input_tokens, input.inputTokenCostPerMillion);
    if (cost !== undefined) event.est_cost_usd = cost;
  } else {
    event.error_code = envelope.error_code;
    event.error_class = input.error === undefined ? 'Error' : errorClassOf(input.error);
    const kind = envelope.details?.kind;
    if (typeof kind === 'string') event.denial_kind = kind;
  }
  return event;
}

export function describeFilter(filter?: NormalizedListFilter): {
  only?: string[];
  except?: string[];
} {
  if (!filter) return {};
  return {
    only: filter.only ? [...filter.only].sort() : undefined,
    except: [...filter.except].sort(),
  };
}

/** Field names a filter constrains, never their values. */
function fieldNames(where: Where): string[] {
  const out = new Set<string>();
  const visit = (w: unknown) => {
    if (Array.isArray(w)) return w.forEach(visit);
    if (!isPlainObject(w)) return;
    for (const [k, v] of Object.entries(w)) {
      if (k.startsWith('$')) visit(v);
      else out.add(k);
    }
  };
  visit(where);
  return [...out].sort();
}

/** The class name of what a call failed with (`AccessDeniedError`, `TypeError`). */
export function errorClassOf(error: unknown): string {
  if (error instanceof Error) return error.constructor?.name || error.name || 'Error';
  return typeof error === 'object' && error !== null ? 'Object' : typeof error;
}
