import type { ServerResponse } from 'node:http';
import type { AgentOptions, ParseAgent } from '../../agent/parse-agent';
import { errorClassName, type McpTransportContext } from '../shared/mcp-transport';
import type { TransportLogger } from '../shared/transport-logger';
import { sendJsonRpcError, sendUnauthorized } from './mcp-http-response';
import type { McpRequest } from './mcp-request';
import { requestIdOf, unauthorizedLogLine } from './unauthorized-log';

/** Maps the authenticated HTTP request to the options of the agent that serves it. */
export type McpAgentFactory = (
  request: McpRequest,
) => AgentOptions | ParseAgent | Promise<AgentOptions | ParseAgent>;

/**
 * The agent a request acts as: the shared context runs agentFactory on the request the host's
 * guards saw and builds the agent; this maps a refusal to HTTP. Refusals answer the fixed 401 body
 * (the log line names the error's class, its `reason` and the request id, never its message); a
 * session check Parse Server could not answer (validateSession) a 503 with Retry-After, since the
 * token may well be good; other failures a 500 "Internal error" with only the error's class and a
 * few stack frames logged. Undefined once answered.
 */
export async function agentForRequest(
  deps: {
    agentFactory: McpAgentFactory;
    context: Pick<McpTransportContext, 'agentFor'>;
    logger: TransportLogger;
  },
  hostRequest: McpRequest,
  res: ServerResponse,
): Promise<ParseAgent | undefined> {
  const resolution = await deps.context.agentFor(() => deps.agentFactory(hostRequest));
  if (resolution.agent) return resolution.agent;
  const { error } = resolution;
  const name = errorClassName(error);
  if (resolution.refused === 'unauthorized') {
    const reason = (error as { reason?: string }).reason;
    deps.logger.warn(unauthorizedLogLine(name, reason, requestIdOf(hostRequest, res)));
    sendUnauthorized(res);
  } else if (resolution.refused === 'unavailable') {
    deps.logger.warn(`Session check unavailable: ${(error as Error).message}`);
    sendJsonRpcError(
      res,
      503,
      -32000,
      'Service Unavailable: Parse Server could not check the session token. Retry shortly.',
      { headers: { 'Retry-After': String(resolution.retryAfter) } },
    );
  } else {
    const frames = error instanceof Error ? stackFrames(error) : '';
    deps.logger.warn(`Factory error: ${name}${frames ? `\n${frames}` : ''}`);
    sendJsonRpcError(res, 500, -32603, 'Internal error');
  }
  return undefined;
}

/** Stack frames without the first line (which carries the message). */
function stackFrames(error: Error): string {
  return (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 5)
    .join('\n');
}
