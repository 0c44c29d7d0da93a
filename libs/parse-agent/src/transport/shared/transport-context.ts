import { ParseAgentConfigError } from '../../core/errors';
import type { McpDispatcher } from '../../mcp/mcp-dispatcher';
import type { CancellationBus } from '../../ports/cancellation-bus';
import { InMemoryCancellationBus } from '../../ports/in-memory-cancellation-bus';
import { InMemorySessionStore } from '../../ports/in-memory-session-store';
import type { SessionStore } from '../../ports/session-store';
import { parseBoundedJson } from './bounded-json';
import { chargeRequest } from './call-charging';
import type { McpTransportContext } from './mcp-transport';
import { principalKey } from './principal-key';
import { resolveAgent, type AgentBuilder } from './resolve-agent';
import {
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  DEFAULT_TRANSPORT_LIMITS,
  type TransportLimits,
} from './transport-limits';
import type { TransportLogger } from './transport-logger';
import { UserKeys, UserUnresolvedError, type SessionUserLookup } from './user-key';

/** What a host builds its transports' context from; the parts it leaves out get a default. */
export interface TransportContextParts {
  dispatcher: McpDispatcher;
  /** Builds agents from options (default: none; only ready agents are accepted). */
  agents?: AgentBuilder;
  /** Default: in this process. */
  cancellations?: CancellationBus;
  /** Default: in this process. */
  sessions?: SessionStore;
  /** Resolves a session token to its user's objectId (default: none; such users are refused). */
  sessionUser?: SessionUserLookup;
  limits?: Partial<TransportLimits>;
  /** Default: stderr, so a transport on stdout is never written to. */
  logger?: TransportLogger;
}

/** Without a builder only agents, not options, can be turned into an agent. */
const READY_AGENTS_ONLY: AgentBuilder = {
  create: () => {
    throw new ParseAgentConfigError(
      'This host builds no agents from options: give the transport a ParseAgent.',
    );
  },
};

const STDERR_LOGGER: TransportLogger = {
  warn: (message) => process.stderr.write(`[parse-agent] ${message}\n`),
  error: (message) => process.stderr.write(`[parse-agent] ${message}\n`),
};

/** The context a host starts its transports with (one per host, shared by its transports). */
export function createTransportContext(parts: TransportContextParts): McpTransportContext {
  const agents = parts.agents ?? READY_AGENTS_ONLY;
  const limits: TransportLimits = { ...DEFAULT_TRANSPORT_LIMITS, ...parts.limits };
  const lookup: SessionUserLookup =
    parts.sessionUser ?? (() => Promise.reject(new UserUnresolvedError()));
  return {
    dispatcher: parts.dispatcher,
    cancellations: parts.cancellations ?? new InMemoryCancellationBus(),
    sessions:
      parts.sessions ??
      new InMemorySessionStore(DEFAULT_SESSION_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSIONS),
    limits,
    logger: parts.logger ?? STDERR_LOGGER,
    agentFor: (source) => resolveAgent(source, agents),
    principalKey,
    userKeys: new UserKeys(lookup),
    parseJson: (text) => parseBoundedJson(text, limits.maxJsonDepth),
    charge: chargeRequest,
  };
}
