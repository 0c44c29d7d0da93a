import { ParseAgent, type AgentOptions } from '../../agent/parse-agent';
import { AgentUnauthorizedError, ParseAgentConfigError, ParseAgentError } from '../../core/errors';

/** Builds agents from options, with the host's defaults (ParseAgentFactory in the Nest module). */
export interface AgentBuilder {
  create(options: AgentOptions): ParseAgent;
  /** Builds an agent after checking its session token (options with `validateSession: true`). */
  createValidated?(options: AgentOptions): Promise<ParseAgent>;
}

type Produced = AgentOptions | ParseAgent;

/** What a caller acts as: an agent, its options, or a function producing either (may be async). */
export type AgentSource = Produced | (() => Produced | Promise<Produced>);

/** The agent for a caller, or why there is none. */
export type AgentResolution =
  | { agent: ParseAgent; refused?: undefined }
  | {
      agent?: undefined;
      /**
       * `unauthorized`: the source refused the caller (AgentUnauthorizedError). `unavailable`: the
       * session check could not reach Parse Server, so the token may well be good; retry after
       * `retryAfter` seconds. `failed`: anything else (a bug or a misconfiguration).
       */
      refused: 'unauthorized' | 'unavailable' | 'failed';
      error: unknown;
      retryAfter?: number;
    };

/**
 * Runs the source and builds its agent (see agentFromFactoryResult). Never rejects: a refusal says
 * why, and anything that is neither an agent nor options is a `failed` one, never a master-key
 * agent.
 */
export async function resolveAgent(
  source: AgentSource,
  agents: AgentBuilder,
): Promise<AgentResolution> {
  try {
    const produced: unknown = typeof source === 'function' ? await source() : source;
    return { agent: await agentFromFactoryResult(produced, agents) };
  } catch (error) {
    if (error instanceof AgentUnauthorizedError) return { refused: 'unauthorized', error };
    if (sessionCheckUnavailable(error)) {
      return { refused: 'unavailable', error, retryAfter: error.retryAfter };
    }
    return { refused: 'failed', error };
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
  return (options.validateSession === true || options.impersonate !== undefined) &&
    agents.createValidated
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
