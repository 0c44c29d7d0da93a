import { ParseAgent } from '../agent/parse-agent';
import type { McpTransportContext } from '../transport/shared/mcp-transport';
import type { TransportLogger } from '../transport/shared/transport-logger';
import { createTransportContext } from '../transport/shared/transport-context';
import type { AgentComposition } from './compose-agent-services';

/**
 * The transport context of a host without Nest (the CLI): the composition's dispatcher, agents
 * built on its services, sessions and cancellation in this process, users resolved through its
 * Parse client. The Nest module builds its own from the module's providers.
 */
export function transportContextFor(
  composition: Pick<AgentComposition, 'dispatcher' | 'services' | 'parse'>,
  logger?: TransportLogger,
): McpTransportContext {
  return createTransportContext({
    dispatcher: composition.dispatcher,
    agents: { create: (options) => new ParseAgent(options, composition.services) },
    sessionUser: async (sessionToken) =>
      (
        await composition.parse.request<{ objectId?: string }>('GET', '/users/me', undefined, {
          sessionToken,
        })
      ).objectId ?? '',
    logger,
  });
}
