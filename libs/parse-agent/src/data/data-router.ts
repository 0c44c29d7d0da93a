import type { AgentIdentity } from '../core/agent-identity';
import { ParseAgentConfigError } from '../core/errors';
import {
  directDatabaseRank,
  ROW_OPERATIONS,
  type DataOperation,
  type DataPath,
  type DataPathProvider,
} from '../ports/data-path';

/** No configured path can serve the operation for this identity (the call is refused, never run unscoped). */
export class DataPathUnavailableError extends ParseAgentConfigError {}

/**
 * Chooses the data path for an operation and identity: the highest-ranked provider that serves it. Fails
 * closed: when none does, the caller gets an error naming what to configure, never a path that
 * would ignore the identity's scope.
 */
export class DataRouter {
  constructor(protected readonly providers: readonly DataPathProvider[]) {
    if (!providers.length)
      throw new ParseAgentConfigError('DataRouter needs at least one data path.');
  }

  pathFor(operation: DataOperation, identity: AgentIdentity): DataPath {
    // The highest rank among the providers that serve it; the earlier one on a tie. Each provider
    // declares its rank: Parse REST asks for row reads and writes (Parse Server enforces ACL/CLP
    // and runs triggers), direct database paths for analytics (REST aggregate is master-key-only
    // and unreliable on PostgreSQL).
    let chosen: DataPathProvider | undefined;
    let best = Number.NEGATIVE_INFINITY;
    let refusals: string[] | undefined;
    for (const provider of this.providers) {
      const refusal = provider.refusal(operation, identity);
      if (refusal) {
        (refusals ??= []).push(`${provider.kind}: ${refusal}`);
        continue;
      }
      const rank = provider.rank ? provider.rank(operation) : directDatabaseRank(operation);
      if (rank > best) {
        best = rank;
        chosen = provider;
      }
    }
    if (chosen) return chosen.bind(identity);
    const fix = ROW_OPERATIONS.has(operation)
      ? 'Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot) or use a session token.'
      : 'Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot), which enforces ACL, CLP and protectedFields itself.';
    throw new DataPathUnavailableError(
      `No configured data path can run '${operation}' for a ${identity.authType} agent (${(refusals ?? []).join('; ')}). ${fix}`,
    );
  }

  /** Drops every provider's cached schemas and role expansions (those that cache any). */
  invalidate(): void {
    for (const provider of this.providers) provider.invalidate?.();
  }

  /** Whether some path serves the operation for the identity (no I/O). */
  serves(operation: DataOperation, identity: AgentIdentity): boolean {
    return this.providers.some((p) => !p.refusal(operation, identity));
  }
}
