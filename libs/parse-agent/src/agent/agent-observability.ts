import { ParseAgentConfigError } from '../core/errors';

/** Operations an agent keeps in its log unless `maxLogSize` says otherwise. */
export const DEFAULT_MAX_LOG_SIZE = 100;

/** What an agent records about its calls, besides the events every agent emits. */
export interface ObservabilitySettings {
  /** One audit log line per master-key call (default true; a sub-agent cannot turn it off). */
  masterKeyAudit: boolean;
  /** How many operations `operationLog` keeps (the oldest drop out); 0 keeps none. */
  maxLogSize: number;
  /** USD per million input tokens, to price each tool call's result (`est_cost_usd`). */
  inputTokenCostPerMillion?: number;
}

/** The agent options that set ObservabilitySettings. */
export interface ObservabilityOptions {
  masterKeyAudit?: boolean;
  maxLogSize?: number;
  inputTokenCostPerMillion?: number;
}

/** Validates the options; a sub-agent inherits its parent's and may not switch the audit off. */
export function resolveObservabilityOptions(
  options: ObservabilityOptions,
  parent?: ObservabilitySettings,
): ObservabilitySettings {
  const { masterKeyAudit, maxLogSize, inputTokenCostPerMillion } = options;
  if (masterKeyAudit !== undefined && typeof masterKeyAudit !== 'boolean') {
    throw new ParseAgentConfigError(
      `masterKeyAudit must be true or false (got ${JSON.stringify(masterKeyAudit)}).`,
    );
  }
  if (parent?.masterKeyAudit && masterKeyAudit === false) {
    throw new ParseAgentConfigError(
      'A sub-agent cannot set masterKeyAudit: false when its parent audits master-key calls; omit it to inherit.',
    );
  }
  if (maxLogSize !== undefined && !(Number.isInteger(maxLogSize) && maxLogSize >= 0)) {
    throw new ParseAgentConfigError(
      `maxLogSize must be a whole number of operations, 0 or more (got ${JSON.stringify(maxLogSize)}).`,
    );
  }
  if (
    inputTokenCostPerMillion !== undefined &&
    !(typeof inputTokenCostPerMillion === 'number' && inputTokenCostPerMillion >= 0)
  ) {
    throw new ParseAgentConfigError(
      `inputTokenCostPerMillion must be a price in USD per million tokens, 0 or more (got ${JSON.stringify(inputTokenCostPerMillion)}).`,
    );
  }
  return {
    masterKeyAudit: masterKeyAudit ?? parent?.masterKeyAudit ?? true,
    maxLogSize: maxLogSize ?? parent?.maxLogSize ?? DEFAULT_MAX_LOG_SIZE,
    inputTokenCostPerMillion: inputTokenCostPerMillion ?? parent?.inputTokenCostPerMillion,
  };
}

/** One entry of an agent's operation log: what ran and how it ended, never argument values. */
export interface OperationLogEntry {
  tool: string;
  args_keys: string[];
  success: boolean;
  error_code?: string;
  denial_kind?: string;
  duration_ms: number;
  at: string;
}

/** The last `capacity` entries, oldest first: a ring, so a long-lived agent's log stays bounded. */
export class OperationLog<T> {
  protected readonly ring: T[] = [];
  protected next = 0;

  constructor(readonly capacity: number) {}

  push(entry: T): void {
    if (this.capacity === 0) return;
    if (this.ring.length < this.capacity) {
      this.ring.push(entry);
      return;
    }
    this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.capacity;
  }

  get size(): number {
    return this.ring.length;
  }

  /** A copy, oldest first. */
  entries(): T[] {
    return [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
  }
}

/** A result's estimated input tokens priced at `perMillion` USD, rounded to 6 places. */
export function estimatedCostUsd(
  tokens: number,
  perMillion: number | undefined,
): number | undefined {
  if (perMillion === undefined) return undefined;
  return Math.round((tokens / 1_000_000) * perMillion * 1e6) / 1e6;
}
