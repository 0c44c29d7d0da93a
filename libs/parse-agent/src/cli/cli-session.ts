import { createAgentServices } from '../agent/create-agent-services';
import { ParseAgent, type AgentServices } from '../agent/parse-agent';
import { conversationFactory } from '../client/conversation-factory';
import { ParseAgentError, ParseRequestError } from '../core/errors';
import type { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import { CliUsageError, type CliSettings } from './cli-settings';
import { loadModels } from './load-models';

/** Who the CLI acts as, for headers and messages (never a secret). */
export interface CliPrincipal {
  label: string;
  sessionToken?: string;
}

export interface CliSession {
  agent: ParseAgent;
  services: AgentServices;
  principal: CliPrincipal;
  settings: CliSettings;
  close(): void;
}

/**
 * Builds the agent a command runs as: services without Nest, then the identity (a session token
 * as given, a username logged in with its password, or the master key).
 */
export async function openCliSession(
  settings: CliSettings,
  log: (line: string) => void,
): Promise<CliSession> {
  const models = settings.models ? loadModels(settings.models) : [];
  const built = createAgentServices({
    parse: settings.parse,
    models,
    conversations: conversationFactory({ env: settings.env }),
    warn: (message) => log(`warning: ${message}`),
  });
  try {
    const principal = await resolvePrincipal(settings, built.parse);
    const agent = new ParseAgent(
      {
        permissions: settings.permissions,
        sessionToken: principal.sessionToken,
        tenantId: settings.tenantId,
      },
      built.services,
    );
    return { agent, services: built.services, principal, settings, close: built.close };
  } catch (error) {
    built.close();
    throw error;
  }
}

async function resolvePrincipal(
  settings: CliSettings,
  parse: ParseRestClient,
): Promise<CliPrincipal> {
  const identity = settings.identity;
  if (identity.kind === 'master') return { label: 'operator (master key)' };
  if (identity.kind === 'login') {
    try {
      const user = await parse.request<{ sessionToken?: string; username?: string }>(
        'POST',
        '/login',
        { username: identity.username, password: identity.password },
        { masterKey: true },
      );
      if (!user.sessionToken) throw new ParseRequestError('Parse error: no session token');
      return { label: `${identity.username} (logged in)`, sessionToken: user.sessionToken };
    } catch (error) {
      throw new CliUsageError(
        `Could not log in as ${identity.username}: ${reason(error)}. Check PARSE_USERNAME and PARSE_PASSWORD.`,
      );
    }
  }
  try {
    const me = await parse.request<{ username?: string }>('GET', '/users/me', undefined, {
      sessionToken: identity.sessionToken,
    });
    return { label: `${me.username ?? 'user'} (session)`, sessionToken: identity.sessionToken };
  } catch (error) {
    throw new CliUsageError(
      `The session token was refused: ${reason(error)}. Log in again for a fresh PARSE_SESSION_TOKEN, or use PARSE_USERNAME and PARSE_PASSWORD.`,
    );
  }
}

function reason(error: unknown): string {
  if (error instanceof ParseAgentError) return error.message.replace(/^Parse error: /, '');
  return error instanceof Error ? error.message : String(error);
}
