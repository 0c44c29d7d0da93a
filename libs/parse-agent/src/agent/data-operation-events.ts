import type { AgentEvents, DataOperationEvent } from '../core/agent-events';
import type { AgentIdentity } from '../core/agent-identity';
import type { DataPath } from '../ports/data-path';
import { errorClassOf } from './tool-call-audit';

/** Most stage names one event lists: a huge pipeline must not make every event huge. */
export const MAX_EVENT_STAGE_TYPES = 32;

/** The DataPath methods that do a data-path operation, by the operation name events carry. */
const OPERATIONS: Readonly<Record<string, string>> = {
  find: 'find',
  get: 'get',
  count: 'count',
  aggregate: 'aggregate',
  groupBy: 'group_by',
  groupByDate: 'group_by_date',
  distinct: 'distinct',
  explain: 'explain',
  search: 'search',
  create: 'create',
  update: 'update',
  delete: 'delete',
  createClass: 'create_class',
  deleteClass: 'delete_class',
};

/** Who the events are about and where they go. */
export interface DataEventSink {
  events: AgentEvents;
  agent: AgentIdentity & { readonly correlationId?: string };
  tool: string;
  /** Operations slower than this (ms) are logged through `warn`; undefined: no slow log. */
  slowQueryMs?: number;
  warn(message: string): void;
}

/**
 * A DataPath whose operations each leave one event (path, operation, class, identity kind,
 * pipeline stage names, row count, duration; never a where, a pipeline's values, written values
 * or rows) and, above the slow-query threshold, one warning line with the same facts.
 */
export function instrumentDataPath<T extends DataPath>(path: T, sink: DataEventSink): T {
  return new Proxy(path, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      const operation = typeof property === 'string' ? OPERATIONS[property] : undefined;
      if (!operation || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const started = performance.now();
        const settle = (result: unknown, error?: unknown) =>
          record(sink, target.kind, operation, args, started, result, error);
        let pending: unknown;
        try {
          pending = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          settle(undefined, error);
          throw error;
        }
        return Promise.resolve(pending).then(
          (result) => {
            settle(result);
            return result;
          },
          (error: unknown) => {
            settle(undefined, error);
            throw error;
          },
        );
      };
    },
  });
}

function record(
  sink: DataEventSink,
  path: string,
  operation: string,
  args: unknown[],
  started: number,
  result: unknown,
  error: unknown,
): void {
  const durationMs = Math.round((performance.now() - started) * 10) / 10;
  const event: DataOperationEvent = {
    path,
    operation,
    class_name: typeof args[0] === 'string' ? args[0] : '',
    identity: sink.agent.authType,
    duration_ms: durationMs,
    success: error === undefined,
    tool: sink.tool,
    agent_id: sink.agent.agentId,
    at: new Date().toISOString(),
  };
  if (operation === 'aggregate' && Array.isArray(args[1])) {
    const stages = (args[1] as unknown[]).map((stage) =>
      stage !== null && typeof stage === 'object' ? (Object.keys(stage)[0] ?? '?') : '?',
    );
    event.stage_types = stages.slice(0, MAX_EVENT_STAGE_TYPES);
    if (stages.length > MAX_EVENT_STAGE_TYPES) event.stage_count = stages.length;
  }
  const rows = rowCount(operation, result);
  if (rows !== undefined) event.rows = rows;
  if (error !== undefined) event.error_class = errorClassOf(error);
  if (sink.agent.correlationId) event.correlation_id = sink.agent.correlationId;
  sink.events.emitDataOperation(event);
  if (sink.slowQueryMs !== undefined && durationMs > sink.slowQueryMs) {
    sink.warn(
      [
        `SLOW data operation ${operation} ${event.class_name || '-'}`,
        `path=${path}`,
        `${durationMs}ms`,
        `identity=${event.identity}`,
        `tool=${sink.tool}`,
        ...(event.stage_types ? [`stages=${event.stage_types.join(',')}`] : []),
        ...(event.rows !== undefined ? [`rows=${event.rows}`] : []),
        ...(error !== undefined ? [`failed=${event.error_class}`] : []),
        `agent=${sink.agent.agentId}`,
      ].join(' '),
    );
  }
}

/** Rows an operation returned (not a count's number, which is no row). */
function rowCount(operation: string, result: unknown): number | undefined {
  if (Array.isArray(result)) return result.length;
  if (operation === 'get') return result ? 1 : 0;
  if (operation === 'search' && result && typeof result === 'object') {
    const rows = (result as { rows?: unknown }).rows;
    return Array.isArray(rows) ? rows.length : undefined;
  }
  return undefined;
}
