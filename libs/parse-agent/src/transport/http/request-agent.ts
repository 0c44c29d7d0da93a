import type { ServerResponse } from 'node:http';
import { AgentUnauthorizedError, ParseAgentConfigError, ParseAgentError } from '../../core/errors';
import { ParseAgent, type AgentOptions } from '../../agent/parse-agent';
import { errorClassName } from '../mcp-transport';
import { sendJsonRpcError, sendUnauthorized } from './mcp-http-response';
import type { McpRequest } from './mcp-request';
import type { TransportLogger } from './transport-logger';
import { requestIdOf, unauthorizedLogLine } from './unauthorized-log';

/** Maps the authenticated HTTP request to the options of the agent that serves it. */
export type McpAgentFactory = (
  request: McpRequest,
) => AgentOptions | ParseAgent | Promise<AgentOptions | ParseAgent>;

export interface AgentBuilder {
  create(options: AgentOptions): ParseAgent;
  /** Builds an agent after checking its session token (options with `validateSession: true`). */
  createValidated?(options: AgentOptions): Promise<ParseAgent>;
}

/**
 * The agent a request acts as: runs agentFactory on the request the host's guards saw and builds
 * the agent. Refusals answer the fixed 401 body (the log line names the error's class, its
 * `reason` and the request id, never its message); a session check Parse Server could not answer
 * (validateSession) a 503 with Retry-After, since the token may well be good; other failures a 500
 * "Internal error" with only the error's class and a few stack frames logged. Undefined once
 * answered.
 */
export async function agentForRequest(
  deps: { agentFactory: McpAgentFactory; agents: AgentBuilder; logger: TransportLogger },
  hostRequest: McpRequest,
  res: ServerResponse,
): Promise<ParseAgent | undefined> {
  try {
    return await agentFromFactoryResult(await deps.agentFactory(hostRequest), deps.agents);
  } catch (error) {
    const name = errorClassName(error);
    if (error instanceof AgentUnauthorizedError) {
      deps.logger.warn(unauthorizedLogLine(name, error.reason, requestIdOf(hostRequest, res)));
      sendUnauthorized(res);
    } else if (sessionCheckUnavailable(error)) {
      deps.logger.warn(`Session check unavailable: ${error.message}`);
      sendJsonRpcError(
        res,
        503,
        -32000,
        'Service Unavailable: Parse Server could not check the session token. Retry shortly.',
        { headers: { 'Retry-After': String(error.retryAfter) } },
      );
    } else {
      const frames = error instanceof Error ? stackFrames(error) : '';
      deps.logger.warn(`Factory error: ${name}${frames ? `\n${frames}` : ''}`);
      sendJsonRpcError(res, 500, -32603, 'Internal error');
    }
    return undefined;
  }
}

/**
 * The agent for what an agentFactory produced: the agent it built, or one built from its options
 * (checked with Parse Server first when they ask for `validateSession`). Anything that is not an
 * options object (undefined from a branch that forgot to return, a bare token string) is a
 * ParseAgentConfigError, never read as "no options", which would be a master-key agent.
 */
export async function agentFromFactoryResult(
  produced: unknown,
  agents: AgentBuilder,
): Promise<ParseAgent> {
  if (produced instanceof ParseAgent) return produced;
  if (typeof produced !== 'object' || produced === null || Array.isArray(produced)) {
    const got = produced === null ? 'null' : Array.isArray(produced) ? 'an array' : typeof produced;
    throw new ParseAgentConfigError(
      `agentFactory returned ${got}, not agent options: return an options object ({} for a master-key agent) or a ParseAgent, or throw AgentUnauthorizedError to refuse the request.`,
    );
  }
  const options = produced as AgentOptions;
  // Without createValidated, create() refuses validateSession (fail closed: 500).
  return options.validateSession === true && agents.createValidated
    ? await agents.createValidated(options)
    : agents.create(options);
}

/** ParseSessionVerifier's SessionCheckUnavailableError (auth/ sits above this layer). */
function sessionCheckUnavailable(
  error: unknown,
): error is ParseAgentError & { retryAfter: number } {
  return (
    error instanceof ParseAgentError &&
    error.errorCode === 'session_check_unavailable' &&
    typeof (error as { retryAfter?: unknown }).retryAfter === 'number'
  );
}

/** Stack frames without the first line (which carries the message). */
function stackFrames(error: Error): string {
  return (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 5)
    .join('\n');
}
