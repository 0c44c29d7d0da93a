import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AgentEvents } from 'nestjs-parse-agent';
import { Subscription } from 'rxjs';

/**
 * One log line per tool call: who (auth type, tenant-scoped or not), what tool, with which argument
 * names (never values), the outcome and the time it took. What an audit trail would store.
 */
@Injectable()
export class ToolCallAuditService implements OnModuleInit, OnApplicationShutdown {
  protected readonly logger = new Logger('Audit');
  protected readonly subscription = new Subscription();

  constructor(protected readonly events: AgentEvents) {}

  onModuleInit(): void {
    // Changes: who changed what (field names only); a real app would store these.
    this.subscription.add(
      this.events.mutations$.subscribe((m) =>
        this.logger.log(
          `CHANGE ${m.action}${m.method ? ` ${m.method}` : ''} ${m.class_name}${m.object_id ? `#${m.object_id}` : ''} [${m.changed_keys.join(',')}] by ${m.auth_type}${m.tenant_id ? ` tenant=${m.tenant_id}` : ''}${m.confirmed ? ' (confirmed)' : ''}`,
        ),
      ),
    );
    const calls = this.events.toolCalls$.subscribe((e) => {
      const outcome = e.success
        ? `ok ${e.result_size ?? 0}B`
        : `${e.error_code}${e.denial_kind ? `/${e.denial_kind}` : ''}`;
      this.logger.log(
        `${e.tool}(${e.args_keys.join(',')}) by ${e.auth_type}${e.tenant_scoped ? ' [tenant]' : ''} -> ${outcome} in ${e.duration_ms}ms${e.correlation_id ? ` cid=${e.correlation_id}` : ''}`,
      );
    });
    this.subscription.add(calls);
  }

  onApplicationShutdown(): void {
    this.subscription.unsubscribe();
  }
}
