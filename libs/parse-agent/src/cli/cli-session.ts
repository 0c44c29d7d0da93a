import { ParseAgent, type AgentServices } from '../agent/parse-agent';
import { tenantOfUser } from '../auth/tenant-source';
import { conversationFactory } from '../client/conversation-factory';
import { composeAgentServices } from '../composition/compose-agent-services';
import { databaseOptions } from '../composition/data-paths';
import { transportContextFor } from '../composition/transport-context';
import { AccessDeniedError, ParseRequestError } from '../core/errors';
import type { ParseRestClient } from '../data/parse-rest/parse-rest-client';
import type { McpDispatcher } from '../mcp/mcp-dispatcher';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import type { McpTransportContext } from '../transport/shared/mcp-transport';
import { resolveTenantScope } from '../security/tenant-scope';
import { CLI_ENV, CliUsageError, type CliSettings } from './cli-settings';
import { routeCliSecurityLines } from './cli-security-lines';
import { runCliStartupCheck } from './cli-startup-check';
import { loadModels } from './load-models';
import { reportUnregisteredClasses } from './unregistered-classes';
import type { SearchIndexer } from '../retrieval/search-indexer';

/** Who the CLI acts as, for headers and messages (never a secret). */
export interface CliPrincipal {
  label: string;
  sessionToken?: string;
  /** The user behind the session as Parse Server reported it, for chat's system prompt. */
  user?: { objectId?: string; username?: string };
}

export interface CliSession {
  agent: ParseAgent;
  services: AgentServices;
  /** The MCP dispatcher over the same services (for `stdio` and the console). */
  dispatcher: McpDispatcher;
  /** What a transport (`stdio`) is started with: the same services and dispatcher. */
  transportContext: McpTransportContext;
  principal: CliPrincipal;
  settings: CliSettings;
  /** Keeps chunk vectors fresh (`embed`): with embeddings and the PostgreSQL path, else null. */
  indexer: SearchIndexer | null;
  close(): Promise<void>;
}

/** Parse's code for a wrong username or password (OBJECT_NOT_FOUND on /login). */
const PARSE_INVALID_LOGIN = 101;
/** Parse's code for an invalid or expired session token. */
const PARSE_INVALID_SESSION = 209;

/**
 * Builds the agent a command runs as: services without Nest (with the direct database path when
 * a path's connection string is set, e.g. POSTGRES_URI), then the identity (a session token as given, a username
 * logged in with its password, or the master key). Refuses an identity the models would have to
 * refuse on every call of a tenant-scoped class: it needs --tenant.
 */
export async function openCliSession(
  settings: CliSettings,
  log: (line: string) => void,
  stderrIsTerminal = false,
): Promise<CliSession> {
  routeCliSecurityLines(settings, log, stderrIsTerminal);
  const models = settings.models ? loadModels(settings.models) : [];
  const database = databaseOptions(settings.database, 'parse-agent');
  const built = composeAgentServices(
    {
      parse: { ...settings.parse, database: database.parseDatabase },
      ...database.paths,
      models,
      unregisteredClasses: settings.unregisteredClasses,
      embeddings: settings.embeddings,
      // The model is resolved when a conversation opens, so commands without one never need it.
      conversations: conversationFactory({ env: settings.env }),
    },
    { warn: (message) => log(`warning: ${message}`), optionsName: 'parse-agent' },
  );
  try {
    // The module's start-up check first: a wrong key or URL is named here (exit 2), not in
    // every tool call that follows.
    await runCliStartupCheck(settings, built.opened);
    const operator = await resolvePrincipal(settings, built.parse);
    // --impersonate: the operator acts as that user; a tenant role is read for the user.
    const principal: CliPrincipal = settings.impersonate
      ? {
          label: `operator (master key) as _User ${settings.impersonate}`,
          user: { objectId: settings.impersonate },
        }
      : operator;
    // The unchecked-tenant note is for a person reading stderr; scripts keep a quiet stderr.
    const note = stderrIsTerminal && !settings.quiet ? log : () => undefined;
    const tenantId = await tenantFor(settings, principal, built.parse, note);
    const agent = new ParseAgent(
      {
        permissions: settings.permissions,
        sessionToken: principal.sessionToken,
        tenantId,
      },
      built.services,
    );
    if (settings.impersonate) {
      await agent.impersonate(settings.impersonate, { label: 'parse-agent CLI' });
    }
    assertTenantBound(agent, built.services.metadata, principal);
    await reportUnregisteredClasses(settings, built.metadata, built.schemas, log);
    return {
      agent,
      services: built.services,
      dispatcher: built.dispatcher,
      transportContext: transportContextFor(built),
      principal,
      settings,
      indexer: built.indexer,
      close: built.close,
    };
  } catch (error) {
    await built.close();
    throw error;
  }
}

/**
 * The tenant the agent is bound to. With --tenant-role, a user's tenant comes from their direct
 * membership in one matching role (something only the operator can change), and a --tenant that
 * disagrees is refused; otherwise it is --tenant as given.
 */
async function tenantFor(
  settings: CliSettings,
  principal: CliPrincipal,
  parse: ParseRestClient,
  note: (line: string) => void,
): Promise<string | undefined> {
  const userId = principal.user?.objectId;
  if (!settings.tenantRole && userId && settings.tenantId) {
    // Nothing here can tell whether the user belongs to the tenant named: a wrong one shows up
    // only as empty results (Parse's ACLs still hide the other tenant's rows), so say so.
    note(
      `note: --tenant ${settings.tenantId} (${CLI_ENV.tenantId}) is taken as given: the CLI cannot check that ${principal.label} belongs to it, and a tenant they are not in answers with no rows rather than a refusal. When users belong to tenants through roles, use --tenant-role '{tenant}-staff' (${CLI_ENV.tenantRole}) instead: the tenant then comes from their role membership.`,
    );
  }
  if (!settings.tenantRole || !userId) return settings.tenantId;
  const binding = await tenantOfUser(parse, userId, { fromRole: settings.tenantRole });
  if (binding.tenantId === undefined) {
    throw new CliUsageError(
      `${principal.label} has no tenant under --tenant-role '${settings.tenantRole}' (${CLI_ENV.tenantRole}): ${binding.reason}`,
    );
  }
  if (settings.tenantId && settings.tenantId !== binding.tenantId) {
    throw new CliUsageError(
      `--tenant ${settings.tenantId} (${CLI_ENV.tenantId}) does not match ${principal.label}'s tenant role membership ('${binding.tenantId}'). Leave --tenant out to use the membership.`,
    );
  }
  return binding.tenantId;
}

/**
 * Without --tenant-role the CLI has no trusted source for a user's tenant (the app decides how
 * users map to tenants), so it takes the tenant from --tenant / PARSE_AGENT_TENANT_ID. Without one,
 * an identity the models
 * scope by tenant is refused up front, naming the setting, rather than on every call.
 */
function assertTenantBound(
  agent: ParseAgent,
  metadata: MetadataRegistry,
  principal: CliPrincipal,
): void {
  if (agent.tenantId) return;
  const unbound: string[] = [];
  for (const meta of metadata.all()) {
    if (!meta.tenantScope || metadata.isHidden(meta.className, agent.usingMasterKey)) continue;
    try {
      resolveTenantScope(meta, agent);
    } catch (error) {
      if (error instanceof AccessDeniedError) unbound.push(meta.className);
      else throw error;
    }
  }
  if (!unbound.length) return;
  throw new CliUsageError(
    `${principal.label} has no tenant, and the models scope ${unbound.sort().join(', ')} by tenant (@AgentTenantScope). When users belong to tenants through roles, pass --tenant-role '{tenant}-staff' (${CLI_ENV.tenantRole}): the tenant then comes from the user's role membership, which they cannot change. Otherwise pass --tenant <id> (${CLI_ENV.tenantId}) naming the tenant this identity belongs to.`,
  );
}

async function resolvePrincipal(
  settings: CliSettings,
  parse: ParseRestClient,
): Promise<CliPrincipal> {
  const identity = settings.identity;
  if (identity.kind === 'master') return { label: 'operator (master key)' };
  if (identity.kind === 'login') {
    try {
      const user = await parse.request<{
        sessionToken?: string;
        username?: string;
        objectId?: string;
      }>(
        'POST',
        '/login',
        { username: identity.username, password: identity.password },
        { masterKey: true },
      );
      if (!user.sessionToken) {
        throw new CliUsageError(
          `Could not log in as ${identity.username}: Parse Server at ${settings.parse.serverURL} answered without a session token. Check that ${CLI_ENV.serverURL} points at Parse Server's mount path (e.g. http://localhost:1337/parse).`,
        );
      }
      return {
        label: `${identity.username} (logged in)`,
        sessionToken: user.sessionToken,
        user: { objectId: user.objectId, username: user.username ?? identity.username },
      };
    } catch (error) {
      if (error instanceof CliUsageError) throw error;
      const serverFault = serverFaultMessage(error, settings);
      if (serverFault)
        throw new CliUsageError(`Could not log in as ${identity.username}: ${serverFault}`);
      const blame =
        error instanceof ParseRequestError && error.parseCode === PARSE_INVALID_LOGIN
          ? `Check ${CLI_ENV.username} (--username) and ${CLI_ENV.password}.`
          : `Check ${CLI_ENV.username}, ${CLI_ENV.password} and ${CLI_ENV.appId}.`;
      throw new CliUsageError(
        `Could not log in as ${identity.username}: ${reason(error)}. ${blame}`,
      );
    }
  }
  try {
    const me = await parse.request<{ username?: string; objectId?: string }>(
      'GET',
      '/users/me',
      undefined,
      { sessionToken: identity.sessionToken },
    );
    return {
      label: `${me.username ?? 'user'} (session)`,
      sessionToken: identity.sessionToken,
      user: { objectId: me.objectId, username: me.username },
    };
  } catch (error) {
    const serverFault = serverFaultMessage(error, settings);
    if (serverFault) throw new CliUsageError(`Could not check the session token: ${serverFault}`);
    const expired = error instanceof ParseRequestError && error.parseCode === PARSE_INVALID_SESSION;
    throw new CliUsageError(
      `The session token was refused: ${reason(error)}. ${expired ? 'Log in again' : 'Check the token, or log in again'} for a fresh ${CLI_ENV.sessionToken}, or use ${CLI_ENV.username} and ${CLI_ENV.password}.`,
    );
  }
}

/**
 * When Parse Server could not be reached or failed on its side, says so: neither the password nor
 * the token is at fault then. Undefined for an answer about the credentials themselves.
 */
function serverFaultMessage(error: unknown, settings: CliSettings): string | undefined {
  if (!(error instanceof ParseRequestError)) return undefined;
  const at = `Parse Server at ${settings.parse.serverURL}`;
  if (error.status === undefined && error.parseCode === undefined) {
    // Unreachable or timed out: the client's message names the cause, without the address.
    return `${at} ${reason(error).replace(/^Parse Server /, '')}. Check ${CLI_ENV.serverURL} (--server-url) and that the server is running.`;
  }
  if (error.status !== undefined && error.status >= 500) {
    return `${at} failed (HTTP ${error.status}: ${reason(error)}). Check the server's logs; the credentials were not checked.`;
  }
  if (error.status === 404 && error.parseCode === undefined) {
    return `${at} answered 404. Check that ${CLI_ENV.serverURL} includes Parse Server's mount path (e.g. http://localhost:1337/parse).`;
  }
  if (error.status === 403 && error.parseCode === undefined) {
    return `${at} refused the application (HTTP 403: ${reason(error)}). Check ${CLI_ENV.appId} and ${CLI_ENV.javascriptKey}.`;
  }
  return undefined;
}

/** The error's message without Parse's prefix or a closing period (callers add their own). */
function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^Parse error: /, '').replace(/[.\s]+$/, '');
}
