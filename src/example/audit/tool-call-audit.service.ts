import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AgentEvents, principalOf, type ToolCallEvent } from 'nestjs-parse-agent';
import type { Subscription } from 'rxjs';
import { currentRequestContext } from './request-context';

/** The audit record of one tool call (JSON logs print it as is). */
export interface ToolCallAuditRecord {
  msg: 'tool_call';
  tool: string;
  outcome: string;
  duration_ms: number;
  request_id?: string;
  session_id?: string;
  principal:
    { kind: 'user'; user_id: string; tenant?: string } | { kind: 'operator' } | { kind: string };
  auth_type: string;
  args_keys: string[];
  result_bytes?: number;
}

/**
 * One log line per tool call: the request and session it belongs to, who made it (user id and
 * tenant, or the operator; never a token), the tool, its argument names (never values), the outcome
 * and the time it took. What an audit trail would store.
 */
@Injectable()
export class ToolCallAuditService implements OnModuleInit, OnApplicationShutdown {
  protected readonly logger = new Logger('Audit');
  protected subscription?: Subscription;

  constructor(protected readonly events: AgentEvents) {}

  onModuleInit(): void {
    this.subscription = this.events.toolCalls$.subscribe((event) => {
      // The event is emitted inside the tool call, so the request's context is current here.
      this.logger.log(auditRecord(event, currentRequestContext()));
    });
    // Changes: who changed what (field names only, never values); a real app would store these.
    this.subscription.add(
      this.events.mutations$.subscribe((m) => {
        const context = currentRequestContext();
        this.logger.log({
          msg: 'mutation',
          action: m.action,
          method: m.method,
          class_name: m.class_name,
          object_id: m.object_id,
          changed_keys: m.changed_keys,
          auth_type: m.auth_type,
          tenant: m.tenant_id,
          confirmed: m.confirmed ?? false,
          request_id: context?.requestId,
        });
      }),
    );
  }

  onApplicationShutdown(): void {
    this.subscription?.unsubscribe();
  }
}

export function auditRecord(
  event: ToolCallEvent,
  context = currentRequestContext(),
): ToolCallAuditRecord {
  const principal = principalOf(context?.request);
  const sessionHeader = context?.request.headers['mcp-session-id'];
  const record: ToolCallAuditRecord = {
    msg: 'tool_call',
    tool: event.tool,
    outcome: event.success
      ? 'ok'
      : `${event.error_code}${event.denial_kind ? `/${event.denial_kind}` : ''}`,
    duration_ms: event.duration_ms,
    principal:
      principal?.kind === 'user'
        ? { kind: 'user', user_id: principal.userId, tenant: principal.tenantId }
        : principal?.kind === 'operator'
          ? { kind: 'operator' }
          : { kind: 'unknown' },
    auth_type: event.auth_type,
    args_keys: event.args_keys,
  };
  if (context) record.request_id = context.requestId;
  const sessionId = typeof sessionHeader === 'string' ? sessionHeader : event.correlation_id;
  if (sessionId) record.session_id = sessionId;
  if (event.result_size !== undefined) record.result_bytes = event.result_size;
  return record;
}
