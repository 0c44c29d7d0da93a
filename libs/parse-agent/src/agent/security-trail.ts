import type { SecurityEvent } from '../core/agent-events';
import type { ToolEnvelope } from '../core/envelope';
import { errorClassOf, SENSITIVE_ARGUMENT_KEYS, type ToolCallAuditInput } from './tool-call-audit';

/** Error codes of a call a gate refused (a `denied` security event). */
const DENIED_CODES: ReadonlySet<string> = new Set([
  'access_denied',
  'permission_denied',
  'tool_filtered',
]);
/** Error codes of a query refused as unsafe (a `blocked` security event). */
const BLOCKED_CODES: ReadonlySet<string> = new Set(['security_blocked']);

type TrailAgent = ToolCallAuditInput['agent'];

/** A value safe inside a log line: no spaces or control characters, at most 64 characters. */
function token(value: string): string {
  const clean = value.replace(/[^A-Za-z0-9_.:@-]/g, '?');
  return clean.length > 64 ? `${clean.slice(0, 64)}...` : clean;
}

/** Argument names safe to log (values never are). */
export function loggableArgKeys(args: Record<string, unknown>): string[] {
  return Object.keys(args).filter((k) => !SENSITIVE_ARGUMENT_KEYS.has(k));
}

/** Who acted, as every security event carries it (the ids and flags, never a credential). */
export function securityEventAgent(agent: TrailAgent) {
  return {
    agent_id: agent.agentId,
    agent_depth: agent.agentDepth,
    auth_type: agent.authType,
    using_master_key: agent.usingMasterKey,
    permissions: agent.permissions,
  };
}

/** The agent's optional context on a security event: parent agent, tenant, correlation id. */
export function addSecurityEventContext(event: SecurityEvent, agent: TrailAgent): void {
  if (agent.parentAgentId) event.parent_agent_id = agent.parentAgentId;
  if (agent.tenantId) event.tenant_id = agent.tenantId;
  if (agent.correlationId) event.correlation_id = agent.correlationId;
}

/** The security event of a refused call, or undefined when the call was not refused. */
export function securityEventOf(input: {
  agent: TrailAgent;
  toolName: string;
  args: Record<string, unknown>;
  envelope: ToolEnvelope;
  error: unknown;
}): SecurityEvent | undefined {
  const { agent, envelope } = input;
  if (envelope.success) return undefined;
  const type = DENIED_CODES.has(envelope.error_code)
    ? 'denied'
    : BLOCKED_CODES.has(envelope.error_code)
      ? 'blocked'
      : undefined;
  if (!type) return undefined;
  // A withheld result was reported as prompt_injection when its canary matched.
  if (envelope.details?.kind === 'prompt_injection') return undefined;
  const event: SecurityEvent = {
    type,
    tool: input.toolName,
    error_code: envelope.error_code,
    error_class: errorClassOf(input.error),
    message: envelope.error,
    args_keys: loggableArgKeys(input.args),
    ...securityEventAgent(agent),
    at: new Date().toISOString(),
  };
  const kind = envelope.details?.kind;
  if (typeof kind === 'string') event.denial_kind = kind;
  addSecurityEventContext(event, agent);
  return event;
}

/** The log line of a security event: one line, no argument values, no message text. */
export function securityEventLine(event: SecurityEvent): string {
  return [
    `SECURITY ${event.type} ${token(event.tool)}: ${event.error_code}${event.denial_kind ? ` (${event.denial_kind})` : ''}`,
    `agent=${event.agent_id}`,
    `auth=${event.auth_type}`,
    `depth=${event.agent_depth}`,
    ...(event.tenant_id ? [`tenant=${token(event.tenant_id)}`] : []),
    ...(event.correlation_id ? [`correlation=${event.correlation_id}`] : []),
  ].join(' ');
}

/** The one-line audit of a call made with the master key: who, which tool, how it ended. */
export function masterKeyAuditLine(input: {
  agent: TrailAgent;
  toolName: string;
  args: Record<string, unknown>;
  envelope: ToolEnvelope;
  durationMs: number;
}): string {
  const { agent, envelope } = input;
  const impersonation = agent.impersonation;
  return [
    impersonation
      ? `AUDIT impersonated call ${token(input.toolName)} user=${token(impersonation.user)}${impersonation.label ? ` label=${token(impersonation.label)}` : ''}`
      : `AUDIT master-key call ${token(input.toolName)}`,
    `args=[${loggableArgKeys(input.args).map(token).join(',')}]`,
    envelope.success ? 'ok' : `failed=${envelope.error_code}`,
    `${input.durationMs}ms`,
    `agent=${agent.agentId}`,
    `depth=${agent.agentDepth}`,
    `permissions=${agent.permissions}`,
    ...(agent.tenantId ? [`tenant=${token(agent.tenantId)}`] : []),
    ...(agent.correlationId ? [`correlation=${agent.correlationId}`] : []),
  ].join(' ');
}

/** The audit line of an impersonation starting or stopping (never the session token). */
export function impersonationAuditLine(input: {
  agentId: string;
  action: 'started' | 'stopped';
  user: string;
  label?: string;
  minted: boolean;
}): string {
  return [
    `AUDIT impersonation ${input.action}`,
    `user=${token(input.user)}`,
    ...(input.label ? [`label=${token(input.label)}`] : []),
    `session=${input.minted ? 'minted' : 'existing'}`,
    `agent=${input.agentId}`,
  ].join(' ');
}
