import { AgentValidationError } from '../core/errors';
import type { ParseAgent } from '../agent/parse-agent';
import { McpMethodError } from './mcp-method-error';
import { JSON_RPC_ERROR_CODES } from './protocol.constants';
import type {
  ResourceSubscriptionService,
  SubscribingSession,
} from './resource-subscriptions.types';
import { parseResourceUri } from './resource-uri';

/** What a subscribe or unsubscribe call has besides its params. */
export interface SubscribeCall {
  agent: ParseAgent;
  signal: AbortSignal;
  session?: SubscribingSession;
}

/** The service, or the answer a server without it gives (the method does not exist there). */
function serviceOrRefuse(
  service: ResourceSubscriptionService | undefined,
  method: string,
): ResourceSubscriptionService {
  if (!service) {
    throw new McpMethodError(JSON_RPC_ERROR_CODES.methodNotFound, `Method not found: ${method}`);
  }
  return service;
}

function sessionOrRefuse(call: SubscribeCall, method: string): SubscribingSession {
  if (!call.session) {
    throw new AgentValidationError(
      `${method} needs a session: send initialize first and then every request with its Mcp-Session-Id (updates arrive on that session's GET stream).`,
    );
  }
  return call.session;
}

/** `resources/subscribe`: checked against the agent's read policy, then recorded for the session. */
export async function subscribeResource(
  service: ResourceSubscriptionService | undefined,
  params: Record<string, unknown>,
  call: SubscribeCall,
): Promise<Record<string, never>> {
  const subscriptions = serviceOrRefuse(service, 'resources/subscribe');
  const resource = parseResourceUri(params.uri);
  const session = sessionOrRefuse(call, 'resources/subscribe');
  if (!subscriptions.available) {
    throw new McpMethodError(
      JSON_RPC_ERROR_CODES.internalError,
      'Resource subscriptions are unavailable: the LiveQuery server does not answer. Retry later; read the resource meanwhile.',
    );
  }
  await subscriptions.subscribe(call.agent, session, resource, call.signal);
  return {};
}

/** `resources/unsubscribe`: idempotent (an unknown URI is not an error). */
export async function unsubscribeResource(
  service: ResourceSubscriptionService | undefined,
  params: Record<string, unknown>,
  call: SubscribeCall,
): Promise<Record<string, never>> {
  const subscriptions = serviceOrRefuse(service, 'resources/unsubscribe');
  const resource = parseResourceUri(params.uri);
  const session = sessionOrRefuse(call, 'resources/unsubscribe');
  await subscriptions.unsubscribe(session, resource.uri);
  return {};
}
