import { defer, from, map, mergeMap, Observable, of } from 'rxjs';
import type { ParseAgent } from '../agent/parse-agent';
import { isPlainObject } from '../core/plain-object';
import type { McpDispatcher } from './mcp-dispatcher';
import type {
  DispatchContext,
  DispatchMessage,
  JsonRpcId,
  JsonRpcNotification,
  JsonRpcResponse,
  McpServerInfo,
} from './mcp-dispatcher.types';
import {
  isModernProtocolVersion,
  JSON_RPC_ERROR_CODES as CODES,
  MODERN_META_KEY,
  PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol.constants';

/**
 * The 2026-07-28 ("sessionless") revision around our dispatcher: every request carries its
 * revision and the client's capabilities in `params._meta`, there is no `initialize`, the server
 * describes itself through `server/discover`, results say `resultType` (and list results how long
 * they may be cached), and notifications arrive on `subscriptions/listen` streams. The dispatcher
 * stays era-free: requests are unwrapped before it and results stamped after it.
 */

/** What a request's per-request envelope said. */
export interface ModernEnvelope {
  protocolVersion: string;
  clientCapabilities: Record<string, unknown>;
  clientInfo?: Record<string, unknown>;
}

/** How a POSTed body is to be served. */
export type EraVerdict =
  | { era: 'legacy' }
  | { era: 'modern'; envelope: ModernEnvelope }
  /** Refused before dispatch: the HTTP status and the JSON-RPC error to answer with. */
  | { era: 'refused'; status: number; message: JsonRpcResponse };

/** Methods the revision's registry has that our dispatcher does not answer as-is. */
export const DISCOVER_METHOD = 'server/discover';
export const LISTEN_METHOD = 'subscriptions/listen';

/** Results the revision lets clients cache; ours depend on the caller, so they are private. */
const CACHEABLE_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** Methods whose `Mcp-Name` header mirrors a body field (the revision's HTTP binding). */
const NAME_HEADER_SOURCE: Readonly<Record<string, string>> = Object.freeze({
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
});

export interface EraHeaders {
  protocolVersion?: string;
  method?: string;
  name?: string;
}

/**
 * Classifies a JSON-RPC body by its envelope (the body decides; the headers must agree).
 * Legacy bodies (no envelope claim, no modern header) are served exactly as before.
 */
export function classifyEra(body: Record<string, unknown>, headers: EraHeaders): EraVerdict {
  const id = jsonRpcId(body.id);
  const isRequest = typeof body.method === 'string' && 'id' in body;
  const params = isPlainObject(body.params) ? body.params : undefined;
  const meta = params && isPlainObject(params._meta) ? params._meta : undefined;
  const claim = meta?.[MODERN_META_KEY.protocolVersion];
  const headerModern = isModernProtocolVersion(headers.protocolVersion);
  if (claim === undefined) {
    // Notifications carry no envelope on either era; only a request can be missing one.
    if (!headerModern || !isRequest) return { era: 'legacy' };
    return refuse(
      400,
      id,
      CODES.invalidParams,
      `Invalid params: a ${headers.protocolVersion} request must carry _meta["${MODERN_META_KEY.protocolVersion}"] and _meta["${MODERN_META_KEY.clientCapabilities}"]`,
    );
  }
  if (typeof claim !== 'string') {
    return refuse(
      400,
      id,
      CODES.invalidParams,
      `Invalid params: _meta["${MODERN_META_KEY.protocolVersion}"] must be a string`,
    );
  }
  if (!isModernProtocolVersion(claim)) {
    // A legacy revision named in an envelope: tell the client what we speak.
    return {
      era: 'refused',
      status: 400,
      message: {
        jsonrpc: '2.0',
        id,
        error: {
          code: CODES.unsupportedProtocolVersion,
          message: `Unsupported protocol version ${JSON.stringify(claim)} in the request envelope (supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
          data: { supported: [...SUPPORTED_PROTOCOL_VERSIONS], requested: claim },
        },
      },
    };
  }
  if (!isRequest)
    return { era: 'modern', envelope: { protocolVersion: claim, clientCapabilities: {} } };
  if (headers.protocolVersion === undefined || headers.method === undefined) {
    return refuse(
      400,
      id,
      CODES.invalidRequest,
      'Bad Request: 2026-07-28 requests need the MCP-Protocol-Version and Mcp-Method headers (matching the body)',
    );
  }
  if (headers.protocolVersion !== claim) {
    return refuse(
      400,
      id,
      CODES.headerMismatch,
      `Header mismatch: MCP-Protocol-Version ${JSON.stringify(headers.protocolVersion)} differs from the envelope's ${JSON.stringify(claim)}`,
    );
  }
  if (headers.method !== body.method) {
    return refuse(
      400,
      id,
      CODES.headerMismatch,
      `Header mismatch: Mcp-Method ${JSON.stringify(headers.method)} differs from the body method ${JSON.stringify(body.method)}`,
    );
  }
  const nameField = NAME_HEADER_SOURCE[body.method as string];
  const bodyName = nameField ? params?.[nameField] : undefined;
  // Non-ASCII values travel base64-encoded (=?base64?...?=); only plain ones are compared here.
  if (
    headers.name !== undefined &&
    typeof bodyName === 'string' &&
    !headers.name.startsWith('=?') &&
    headers.name !== bodyName
  ) {
    return refuse(
      400,
      id,
      CODES.headerMismatch,
      `Header mismatch: Mcp-Name ${JSON.stringify(headers.name)} differs from the body's ${nameField} ${JSON.stringify(bodyName)}`,
    );
  }
  const capabilities = meta?.[MODERN_META_KEY.clientCapabilities];
  if (!isPlainObject(capabilities)) {
    return refuse(
      400,
      id,
      CODES.invalidParams,
      `Invalid params: _meta["${MODERN_META_KEY.clientCapabilities}"] is required (an object, {} when the client declares none)`,
    );
  }
  const clientInfo = meta?.[MODERN_META_KEY.clientInfo];
  return {
    era: 'modern',
    envelope: {
      protocolVersion: claim,
      clientCapabilities: capabilities,
      ...(isPlainObject(clientInfo) && { clientInfo }),
    },
  };
}

/** The body the dispatcher sees: the envelope keys leave `_meta` (progressToken and others stay). */
export function withoutEnvelope(body: Record<string, unknown>): Record<string, unknown> {
  if (!isPlainObject(body.params) || !isPlainObject(body.params._meta)) return body;
  const meta = { ...body.params._meta };
  for (const key of [
    MODERN_META_KEY.protocolVersion,
    MODERN_META_KEY.clientInfo,
    MODERN_META_KEY.clientCapabilities,
    MODERN_META_KEY.logLevel,
  ]) {
    delete meta[key];
  }
  return { ...body, params: { ...body.params, _meta: meta } };
}

/**
 * A result as the revision wants it: `resultType`, cache hints on list/read results (ttl 0 and
 * private: what a caller may see depends on its identity and can change at any time), and the
 * server's identity in `_meta`.
 */
export function encodeModernResult(
  method: string,
  result: unknown,
  serverInfo: McpServerInfo | undefined,
): Record<string, unknown> {
  const encoded: Record<string, unknown> = { ...(isPlainObject(result) ? result : {}) };
  encoded.resultType = 'complete';
  if (CACHEABLE_METHODS.has(method)) {
    encoded.ttlMs = 0;
    encoded.cacheScope = 'private';
  }
  if (serverInfo) {
    const meta = isPlainObject(encoded._meta) ? encoded._meta : {};
    encoded._meta = { ...meta, [MODERN_META_KEY.serverInfo]: serverInfo };
  }
  return encoded;
}

/** The `server/discover` result built from what our `initialize` answers. */
export function discoverResult(initialize: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {
    resultType: 'complete',
    supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    capabilities: initialize.capabilities,
    // The answer depends on the caller (instructions, tool set): nothing to share or keep.
    ttlMs: 0,
    cacheScope: 'private',
  };
  if (typeof initialize.instructions === 'string') result.instructions = initialize.instructions;
  if (isPlainObject(initialize.serverInfo)) {
    result._meta = { [MODERN_META_KEY.serverInfo]: initialize.serverInfo };
  }
  return result;
}

/**
 * Serves one 2026-07-28 request through the (era-free) dispatcher. `server/discover` is answered
 * from what `initialize` would say (so server info, capabilities and instructions have one
 * source); `initialize` itself does not exist on this revision.
 */
export function dispatchModern(
  dispatcher: McpDispatcher,
  body: Record<string, unknown>,
  agent: ParseAgent,
  context: DispatchContext = {},
): Observable<DispatchMessage> {
  const id = jsonRpcId(body.id);
  const method = String(body.method);
  if (method === 'initialize' || method === LISTEN_METHOD) {
    const message =
      method === 'initialize'
        ? 'Method not found: initialize (2026-07-28 has no initialize; use server/discover)'
        : 'subscriptions/listen is served on the HTTP endpoint with streaming on (Accept: text/event-stream)';
    return of({
      kind: 'response',
      status: 200,
      message: { jsonrpc: '2.0', id, error: { code: CODES.methodNotFound, message } },
    });
  }
  if (method === DISCOVER_METHOD) {
    return initializeAnswer(dispatcher, agent, context).pipe(
      map((terminal): DispatchMessage => {
        if (terminal.kind !== 'response' || terminal.message.error) {
          return terminal.kind === 'response'
            ? { ...terminal, message: { ...terminal.message, id } }
            : terminal;
        }
        return {
          kind: 'response',
          status: 200,
          message: {
            jsonrpc: '2.0',
            id,
            result: discoverResult(terminal.message.result as Record<string, unknown>),
          },
        };
      }),
    );
  }
  return defer(() => from(serverInfoOf(dispatcher, agent))).pipe(
    mergeMap((serverInfo) =>
      dispatcher.dispatch(withoutEnvelope(body), agent, context).pipe(
        map((item): DispatchMessage => {
          if (item.kind !== 'response' || item.message.error !== undefined) return item;
          return {
            ...item,
            message: {
              ...item.message,
              result: encodeModernResult(method, item.message.result, serverInfo),
            },
          };
        }),
      ),
    ),
  );
}

/** `notifications/subscriptions/acknowledged`: the part of the filter this server honours. */
export function listenAcknowledgement(
  subscriptionId: string | number,
  honored: ListenFilter,
): JsonRpcNotification {
  return {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: { [MODERN_META_KEY.subscriptionId]: subscriptionId }, notifications: honored },
  };
}

export interface ListenFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/**
 * What of a requested filter is honoured: tool and prompt list changes. The resource set only
 * changes with a deploy and resources cannot be subscribed to, so those parts are left out of the
 * acknowledgement (the client sees they are not delivered). Undefined when the filter is malformed.
 */
export function honoredListenFilter(requested: unknown): ListenFilter | undefined {
  if (!isPlainObject(requested)) return undefined;
  const honored: ListenFilter = {};
  if (requested.toolsListChanged === true) honored.toolsListChanged = true;
  if (requested.promptsListChanged === true) honored.promptsListChanged = true;
  return honored;
}

/** A list-changed notification tagged with the subscription it is delivered on. */
export function tagForSubscription(
  notification: JsonRpcNotification,
  subscriptionId: string | number,
): JsonRpcNotification {
  return {
    ...notification,
    params: {
      ...notification.params,
      _meta: { [MODERN_META_KEY.subscriptionId]: subscriptionId },
    },
  };
}

/** The graceful end of a subscription (server shutdown): the listen request's result. */
export function listenClosedResult(
  subscriptionId: string | number,
  serverInfo?: McpServerInfo,
): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id: subscriptionId,
    result: {
      resultType: 'complete',
      _meta: {
        [MODERN_META_KEY.subscriptionId]: subscriptionId,
        ...(serverInfo && { [MODERN_META_KEY.serverInfo]: serverInfo }),
      },
    },
  };
}

/** What our `initialize` answers for this agent (server info, capabilities, instructions). */
function initializeAnswer(
  dispatcher: McpDispatcher,
  agent: ParseAgent,
  context: DispatchContext,
): Observable<DispatchMessage> {
  return dispatcher.dispatch(
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {} },
    },
    agent,
    { logger: context.logger },
  );
}

const serverInfos = new WeakMap<McpDispatcher, McpServerInfo>();

/** The dispatcher's server info (fixed at construction), read once through `initialize`. */
export async function serverInfoOf(
  dispatcher: McpDispatcher,
  agent: ParseAgent,
): Promise<McpServerInfo | undefined> {
  const known = serverInfos.get(dispatcher);
  if (known) return known;
  let info: McpServerInfo | undefined;
  await new Promise<void>((resolve) => {
    initializeAnswer(dispatcher, agent, {}).subscribe({
      next: (item) => {
        const result = item.kind === 'response' ? item.message.result : undefined;
        if (isPlainObject(result) && isPlainObject(result.serverInfo)) {
          info = result.serverInfo as unknown as McpServerInfo;
        }
      },
      complete: resolve,
      error: () => resolve(),
    });
  });
  if (info) serverInfos.set(dispatcher, info);
  return info;
}

function refuse(status: number, id: JsonRpcId, code: number, message: string): EraVerdict {
  return { era: 'refused', status, message: { jsonrpc: '2.0', id, error: { code, message } } };
}

function jsonRpcId(value: unknown): JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
    ? value
    : null;
}
