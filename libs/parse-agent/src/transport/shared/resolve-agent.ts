import { ParseAgent, type AgentOptions } from '../../agent/parse-agent';
import { AgentUnauthorizedError, ParseAgentError } from '../../core/errors';

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
 * Runs the source and builds its agent. Never rejects. Options with `validateSession: true` go
 * through `createValidated`; a builder without it refuses them in `create` (fail closed).
 */
export async function resolveAgent(
  source: AgentSource,
  agents: AgentBuilder,
): Promise<AgentResolution> {
  try {
    const produced = typeof source === 'function' ? await source() : source;
    if (produced instanceof ParseAgent) return { agent: produced };
    const options = produced ?? {};
    const agent =
      options.validateSession === true && agents.createValidated
        ? await agents.createValidated(options)
        : agents.create(options);
    return { agent };
  } catch (error) {
    if (error instanceof AgentUnauthorizedError) return { refused: 'unauthorized', error };
    if (sessionCheckUnavailable(error)) {
      return { refused: 'unavailable', error, retryAfter: error.retryAfter };
    }
    return { refused: 'failed', error };
  }
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
