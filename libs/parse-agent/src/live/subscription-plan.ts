import type { ParseAgent } from '../agent/parse-agent';
import { AgentValidationError } from '../core/errors';
import { assertReadSucceeded } from '../mcp/mcp-resources';
import type { ParsedResourceUri } from '../mcp/resource-uri';
import type { LiveQueryCredentials } from './live-query-connector';
import type { ResolvedLiveQueryOptions } from './live-query-options';

/** What one subscription runs: the class, the policed where, whose socket, which changes count. */
export interface LivePlan {
  className: string;
  /** The caller's where with the tenant, canonical filter and `filters` ANDed in. */
  where: Record<string, unknown>;
  credentials: LiveQueryCredentials;
  /** Updates count only when one of these fields changed (undefined: any field but updatedAt). */
  fields?: readonly string[];
  /** A count changes only when rows come or go: updates are not news. */
  ignoreUpdates: boolean;
}

/** Constraints LiveQuery cannot evaluate: a subscription with them would never fire correctly. */
const UNSUPPORTED_BY_LIVE_QUERY = new Set([
  '$inQuery',
  '$notInQuery',
  '$select',
  '$dontSelect',
  '$relatedTo',
  '$text',
]);

function unsupportedOperator(value: unknown): string | undefined {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = unsupportedOperator(item);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (UNSUPPORTED_BY_LIVE_QUERY.has(key)) return key;
    const found = unsupportedOperator(inner);
    if (found) return found;
  }
  return undefined;
}

/**
 * Whose LiveQuery socket a subscription may use. A session-token agent uses its own token (Parse
 * filters events by ACL and CLP); a master-key agent the master key (its tenant, canonical filter
 * and filters are in the where). aclUser/aclRole agents are refused: LiveQuery authenticates only
 * a session token or the master key, so it cannot act as that user or role.
 */
export function liveQueryCredentials(agent: ParseAgent): LiveQueryCredentials {
  if (agent.authType === 'session_token' && agent.sessionToken) {
    return { sessionToken: agent.sessionToken };
  }
  if (agent.authType === 'master_key') return { masterKey: true };
  throw new AgentValidationError(
    `resources/subscribe is refused for ${agent.authType === 'acl_role' ? 'aclRole' : 'aclUser'} agents: Parse LiveQuery authenticates only a session token or the master key, so it cannot filter changes as this ACL user or role. Subscribe with a session-token agent; read the resource (resources/read) to see changes meanwhile.`,
  );
}

/**
 * Parse's LiveQuery checks a class's CLP `find` against `*` and the user alone: it counts neither
 * the user's roles nor the master key. A grant it cannot see refuses every subscription (and, for
 * an existing one, drops every event), so such a class is refused here, before any socket opens,
 * with what to change.
 */
function assertLiveQueryGrantsFind(
  className: string,
  clp: Record<string, unknown> | undefined,
  credentials: LiveQueryCredentials,
): void {
  const entry = clp?.find;
  if (entry === undefined || entry === null) return;
  const grants = (typeof entry === 'object' ? entry : {}) as Record<string, unknown>;
  if (grants['*'] === true) return;
  const session = 'sessionToken' in credentials;
  if (session && grants.requiresAuthentication === true) return;
  if (session && Array.isArray(grants.pointerFields) && grants.pointerFields.length) return;
  throw new AgentValidationError(
    session
      ? `${className} cannot be watched: its class-level permission grants find to roles or named users only, and Parse LiveQuery checks it without the user's roles, so it refuses every subscription. Read the resource instead, or ask the operator to add requiresAuthentication to ${className}'s find permission (row ACLs still decide which rows each user sees).`
      : `${className} cannot be watched with the master key: Parse LiveQuery checks ${className}'s class-level permission find even for the master key, and it is not public. Subscribe with a session-token agent, or read the resource instead.`,
  );
}

/**
 * Checks a subscription against the agent's whole read policy before any socket opens: the
 * credentials, the kind, the class (hidden, unregistered, filtered out, not in
 * liveQuery.classNames), then one real read of the resource's query through the agent (class gate,
 * tenant, canonical filter, filters, field allowlist; for a session token Parse checks ACL and the
 * CLP's find), and returns the LiveQuery query built from the same policy.
 */
export async function planSubscription(
  agent: ParseAgent,
  resource: ParsedResourceUri,
  options: ResolvedLiveQueryOptions,
  signal?: AbortSignal,
): Promise<LivePlan> {
  const credentials = liveQueryCredentials(agent);
  if (resource.kind === 'schema') {
    throw new AgentValidationError(
      `${resource.uri} is not subscribable: schema changes are not LiveQuery events. Subscribe to parse://${resource.className}/count, /samples or /query.`,
    );
  }
  const { className } = resource;
  // The read first: a hidden or unknown class is refused with the same words as everywhere.
  const envelope = await agent.execute(
    'query_class',
    {
      class_name: className,
      limit: 1,
      ...(resource.where ? { where: resource.where } : {}),
      ...(resource.keys ? { keys: resource.keys } : {}),
    },
    { signal },
  );
  assertReadSucceeded(envelope);
  if (!options.classNames.has(className)) {
    throw new AgentValidationError(
      `${className} changes are not published by LiveQuery: it is not in liveQuery.classNames. Read the resource instead, or ask the operator to add it to Parse Server's liveQuery.classNames and to this module's liveQuery.classNames.`,
    );
  }
  assertLiveQueryGrantsFind(
    className,
    (await agent.access.schema(className))?.classLevelPermissions,
    credentials,
  );
  const { where } = await agent.access.planWhere(className, resource.where ?? {});
  const unsupported = unsupportedOperator(where);
  if (unsupported) {
    throw new AgentValidationError(
      `${resource.uri} is not subscribable: LiveQuery cannot evaluate ${unsupported}. Subscribe with constraints on the class's own fields.`,
    );
  }
  const fields = agent.access.effectiveKeys(className, resource.keys);
  return {
    className,
    where,
    credentials,
    fields: fields?.filter((f) => f !== 'updatedAt'),
    ignoreUpdates: resource.kind === 'count',
  };
}
