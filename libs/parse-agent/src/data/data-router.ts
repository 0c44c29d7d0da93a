import type { AgentIdentity } from '../core/agent-identity';
import { ParseAgentConfigError } from '../core/errors';
import {
  ROW_OPERATIONS,
  type DataOperation,
  type DataPath,
  type DataPathProvider,
} from '../ports/data-path';

/** No configured path can serve the operation for this identity (the call is refused, never run unscoped). */
export class DataPathUnavailableError extends ParseAgentConfigError {}

/**
 * Chooses the data path for an operation and identity: the first provider that serves it. Fails
 * closed: when none does, the caller gets an error naming what to configure, never a path that
 * would ignore the identity's scope.
 */
export class DataRouter {
  constructor(protected readonly providers: readonly DataPathProvider[]) {
    if (!providers.length)
      throw new ParseAgentConfigError('DataRouter needs at least one data path.');
  }

  pathFor(operation: DataOperation, identity: AgentIdentity): DataPath {
    const reasons: string[] = [];
    const serving: DataPathProvider[] = [];
    for (const provider of this.providers) {
      const refusal = provider.refusal(operation, identity);
      if (refusal) reasons.push(`${provider.kind}: ${refusal}`);
      else serving.push(provider);
    }
    if (serving.length) {
      // Row reads prefer Parse REST (Parse Server enforces ACL/CLP itself); analytics prefer a
      // direct database path (REST aggregate is master-key-only and unreliable on PostgreSQL).
      const rest = serving.find((p) => p.kind === 'parse-rest');
      const direct = serving.find((p) => p.kind !== 'parse-rest');
      // Writes prefer it too: Parse Server runs its triggers and enforces the session's ACL/CLP.
      const restFirst = ROW_OPERATIONS.has(operation) || operation === 'write';
      const chosen = restFirst ? (rest ?? direct) : (direct ?? rest);
      return chosen!.bind(identity);
    }
    const fix = ROW_OPERATIONS.has(operation)
      ? 'Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot) or use a session token.'
      : 'Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot), which enforces ACL, CLP and protectedFields itself.';
    throw new DataPathUnavailableError(
      `No configured data path can run '${operation}' for a ${identity.authType} agent (${reasons.join('; ')}). ${fix}`,
    );
  }

  /** Whether some path serves the operation for the identity (no I/O). */
  serves(operation: DataOperation, identity: AgentIdentity): boolean {
    return this.providers.some((p) => !p.refusal(operation, identity));
  }
}
