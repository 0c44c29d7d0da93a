import type {
  AgentEvents,
  ApprovalEvent,
  MutationEvent,
  SecurityEvent,
} from '../core/agent-events';
import { failureFromError, type ToolEnvelope } from '../core/envelope';
import type { MutationAuditInput } from '../tools/tool-context';
import { securityLog } from '../core/security-banner';
import type { ToolCallInfo } from './agent-hooks';
import {
  OperationLog,
  type ObservabilitySettings,
  type OperationLogEntry,
} from './agent-observability';
import type { ToolRunResult } from './run-tool-call';
import type { ImpersonationInfo } from './agent-impersonation';
import {
  addSecurityEventContext,
  loggableArgKeys,
  impersonationAuditLine,
  masterKeyAuditLine,
  securityEventAgent,
  securityEventLine,
  securityEventOf,
} from './security-trail';
import { buildToolCallEvent, type ToolCallAuditInput } from './tool-call-audit';

type RecordedAgent = ToolCallAuditInput['agent'];

/** The filters a tool-call event names (never their values), fixed when the agent is built. */
export type RecordedFilters = Pick<ToolCallAuditInput, 'filters' | 'agentFilters'>;

/**
 * What a call leaves behind once it ends: the tool-call event (with telemetry), an entry in the
 * agent's bounded operation log, a security event and log line when it was refused, and a
 * one-line audit when the master key made it.
 */
export class AgentCallRecorder {
  constructor(
    protected readonly agent: RecordedAgent,
    protected readonly settings: ObservabilitySettings,
    protected readonly events: AgentEvents,
    protected readonly filters: RecordedFilters,
  ) {}

  /** The last operations, oldest first (made on the first call). */
  protected log?: OperationLog<LoggedOperation>;

  /** The operation log as the agent hands it out. */
  operations(): OperationLogEntry[] {
    return (this.log?.entries() ?? []).map(({ time, ...entry }) => ({
      ...entry,
      at: new Date(time).toISOString(),
    }));
  }

  /** The agent started or stopped impersonating: one audit line (user, label; never the token). */
  impersonation(action: 'started' | 'stopped', info: ImpersonationInfo): void {
    securityLog(impersonationAuditLine({ agentId: this.agent.agentId, action, ...info }));
  }

  /** A tool result held an operator's canary: a security event and log line (ids, never text). */
  promptInjection(
    toolName: string,
    args: Record<string, unknown>,
    canaries: string[],
    refused: boolean,
  ): void {
    const { agent } = this;
    const event: SecurityEvent = {
      type: 'prompt_injection',
      tool: toolName,
      error_code: refused ? 'access_denied' : 'none',
      error_class: refused ? 'AccessDeniedError' : 'none',
      denial_kind: 'prompt_injection',
      message: `The result held prompt-injection canar${canaries.length > 1 ? 'ies' : 'y'} ${canaries.join(', ')}${refused ? '; it was withheld' : ''}.`,
      canaries,
      refused,
      args_keys: loggableArgKeys(args),
      ...securityEventAgent(agent),
      at: new Date().toISOString(),
    };
    addSecurityEventContext(event, agent);
    securityLog(`${securityEventLine(event)} canaries=${canaries.join(',')}`);
    this.events.emitSecurity(event);
  }

  /** One approval round trip (who and when are added here). */
  approval(
    input: Omit<ApprovalEvent, 'agent_id' | 'correlation_id' | 'impersonated_user' | 'at'>,
  ): void {
    const { agent } = this;
    this.events.emitApproval({
      ...input,
      agent_id: agent.agentId,
      ...(agent.correlationId ? { correlation_id: agent.correlationId } : {}),
      ...(agent.impersonation ? { impersonated_user: agent.impersonation.user } : {}),
      at: new Date().toISOString(),
    });
  }

  /** The call as hooks see it. */
  callInfo(toolName: string, args: Record<string, unknown>): ToolCallInfo {
    const { agent } = this;
    return {
      tool: toolName,
      args,
      agentId: agent.agentId,
      agentDepth: agent.agentDepth,
      authType: agent.authType,
      ...(agent.correlationId ? { correlationId: agent.correlationId } : {}),
    };
  }

  /**
   * A call a gate refused before it started (rate limit, tier, filter, env gate, arguments):
   * returns its envelope.
   */
  refused(toolName: string, args: unknown, error: unknown, started: number): ToolEnvelope {
    const envelope = failureFromError(error, toolName);
    const plain = args !== null && typeof args === 'object' && !Array.isArray(args);
    const keys = plain ? (args as Record<string, unknown>) : {};
    this.trail(toolName, keys, envelope, error, Date.now() - started);
    return envelope;
  }

  /** The audit event of a completed change (field names only), always emitted. */
  mutation(toolName: string, input: MutationAuditInput, confirmed: boolean | undefined): void {
    const { agent } = this;
    const event: MutationEvent = {
      ...input,
      tool: toolName,
      agent_id: agent.agentId,
      auth_type: agent.authType,
      using_master_key: agent.usingMasterKey,
      permissions: agent.permissions,
      ...(agent.tenantId ? { tenant_id: agent.tenantId } : {}),
      ...(confirmed !== undefined ? { confirmed } : {}),
      ...(agent.correlationId ? { correlation_id: agent.correlationId } : {}),
      at: new Date().toISOString(),
    };
    if (input.object_id === undefined) delete event.object_id;
    if (input.method === undefined) delete event.method;
    this.events.emitMutation(event);
  }

  /** A call that got past the gates (ran, was refused by a hook, or was cancelled first). */
  finished(
    toolName: string,
    args: Record<string, unknown>,
    result: ToolRunResult,
    durationMs: number,
  ): void {
    const { envelope, error } = result;
    // Calls cancelled before they started leave no tool-call event (they did no work).
    if (result.stage !== 'not_started' && this.events.observed) {
      this.events.emit(
        buildToolCallEvent({
          agent: this.agent,
          toolName,
          args,
          envelope,
          durationMs,
          filters: this.filters.filters,
          agentFilters: this.filters.agentFilters,
          error,
          inputTokenCostPerMillion: this.settings.inputTokenCostPerMillion,
          embeddings: result.embeddings,
        }),
      );
    }
    this.trail(toolName, args, envelope, error, durationMs);
  }

  protected trail(
    toolName: string,
    args: Record<string, unknown>,
    envelope: ToolEnvelope,
    error: unknown,
    durationMs: number,
  ): void {
    const capacity = this.settings.maxLogSize;
    if (capacity > 0) {
      (this.log ??= new OperationLog(capacity)).push(
        logEntry(toolName, args, envelope, durationMs),
      );
    }
    const security = securityEventOf({ agent: this.agent, toolName, args, envelope, error });
    if (security) {
      securityLog(securityEventLine(security));
      this.events.emitSecurity(security);
    }
    // An impersonating agent is the operator acting as a user: audited like the master key.
    if ((this.agent.usingMasterKey || this.agent.impersonation) && this.settings.masterKeyAudit) {
      securityLog(masterKeyAuditLine({ agent: this.agent, toolName, args, envelope, durationMs }));
    }
  }
}

/** An operation log entry as kept: the time as a number, formatted when the log is read. */
type LoggedOperation = Omit<OperationLogEntry, 'at'> & { time: number };

function logEntry(
  toolName: string,
  args: Record<string, unknown>,
  envelope: ToolEnvelope,
  durationMs: number,
): LoggedOperation {
  const entry: LoggedOperation = {
    tool: toolName,
    args_keys: loggableArgKeys(args),
    success: envelope.success,
    duration_ms: durationMs,
    time: Date.now(),
  };
  if (!envelope.success) {
    entry.error_code = envelope.error_code;
    const kind = envelope.details?.kind;
    if (typeof kind === 'string') entry.denial_kind = kind;
  }
  return entry;
}
