import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPReconnectionOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ParseAgentAuthGuard, ParseAgentModule, type McpEndpointOptions } from 'nestjs-parse-agent';
import type { InternalLiveQueryOptions } from 'nestjs-parse-agent/live/live-query-options';
import { LiveQueryHost } from 'nestjs-parse-agent/nest/live-query.host';
import type { SessionStore } from 'nestjs-parse-agent/ports/session-store';
import { tenantAcl } from '../../src/embedded/seed/demo-dataset';
import { agentOptionsFor, DEMO_TENANT_SOURCE } from '../../src/example/auth/agent-factory';
import { CORE_MODELS } from '../../src/example/models';
import type { LiveQueryStack } from './live-query-stack';

/**
 * What the live suites share: the demo's identities (alice: acme staff, bob: globex staff, carol:
 * acme staff and admin) behind the library's own guard, on a Parse Server that runs LiveQuery.
 */
export interface LiveApp {
  app: INestApplication;
  /** The MCP endpoint, http://127.0.0.1:<port>/mcp. */
  url: string;
  /** The app's origin, http://127.0.0.1:<port>. */
  origin: string;
}

export interface LiveAppOptions {
  /**
   * Merged over `{ classNames: ['Order'], debounceMs: 50 }`; null: no `liveQuery` option at all.
   * `timing` (internal) shortens the plan retry waits and the shared-records re-read.
   */
  liveQuery?: Partial<InternalLiveQueryOptions> | null;
  /** Merged over the guards; null: no MCP endpoint (the `mcp` extra left out). */
  mcp?: Partial<McpEndpointOptions> | null;
  /** The module's `sessionStore` option (the application's own store). */
  sessionStore?: SessionStore;
  /** Sessions (and, where the library keeps them there, subscriptions) in Redis. */
  redis?: { url: string; keyPrefix: string };
  /** Extra imports beside ParseAgentModule (the console module, for one). */
  imports?: unknown[];
}

/**
 * Boots a Nest app with ParseAgentModule and `liveQuery` on `stack` (its Parse Server too); resolves
 * once LiveQuery answers.
 */
export async function startLiveApp(
  stack: LiveQueryStack,
  options: LiveAppOptions = {},
): Promise<LiveApp> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ParseAgentModule.forRoot({
        parse: {
          serverURL: stack.serverURL,
          appId: stack.appId,
          masterKey: stack.masterKey,
          javascriptKey: stack.javascriptKey,
        },
        models: [...CORE_MODELS],
        unregisteredClasses: 'hidden',
        defaults: { permissions: 'readonly' },
        rateLimiter: { check: () => undefined },
        suppressSecurityBanners: true,
        auth: { apiKey: `operator-${randomBytes(6).toString('hex')}`, tenant: DEMO_TENANT_SOURCE },
        agentFactory: (request) => agentOptionsFor(request),
        ...(options.liveQuery === null
          ? {}
          : { liveQuery: { classNames: ['Order'], debounceMs: 50, ...options.liveQuery } }),
        ...(options.mcp === null
          ? {}
          : {
              mcp: { guards: [ParseAgentAuthGuard], initializeRateLimit: false, ...options.mcp },
            }),
        ...(options.redis ? { redis: options.redis } : {}),
        ...(options.sessionStore ? { sessionStore: options.sessionStore } : {}),
      }),
      ...((options.imports ?? []) as []),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({
    logger: ['warn', 'error'],
    forceCloseConnections: true,
  });
  await app.listen(0, '127.0.0.1');
  // LiveQuery is probed in the background from bootstrap on.
  if (options.liveQuery !== null && !(await app.get(LiveQueryHost).ready))
    throw new Error('LiveQuery did not answer');
  const origin = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  return { app, url: `${origin}/mcp`, origin };
}

/** Polls `check` every 20 ms; resolves to the time it took, or throws after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 3000): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Date.now() - start;
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates an order of `tenant` through the stack's Parse REST, as the back office does (master key). */
export async function createOrder(
  stack: LiveQueryStack,
  tenant: string,
): Promise<{ objectId: string }> {
  const res = await fetch(`${stack.serverURL}/classes/Order`, {
    method: 'POST',
    headers: {
      'X-Parse-Application-Id': stack.appId,
      'X-Parse-Master-Key': stack.masterKey,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({
      tenantId: tenant,
      orderNumber: `${tenant.toUpperCase()}-LIVE-${randomBytes(3).toString('hex')}`,
      quantity: 1,
      unitPrice: 10,
      total: 10,
      status: 'pending',
      channel: 'web',
      isDeleted: false,
      ACL: tenantAcl(tenant),
    }),
  });
  const json = (await res.json()) as { objectId: string };
  if (!res.ok) throw new Error(`POST /classes/Order: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Takes an order out of the count through `/parse` with a user's own session (a soft delete). */
export async function softDeleteOrder(
  stack: LiveQueryStack,
  objectId: string,
  sessionToken: string,
): Promise<Response> {
  return fetch(`${stack.serverURL}/classes/Order/${objectId}`, {
    method: 'PUT',
    headers: {
      'X-Parse-Application-Id': stack.appId,
      'X-Parse-JavaScript-Key': stack.javascriptKey,
      'X-Parse-Session-Token': sessionToken,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ isDeleted: true }),
  });
}

export interface LiveListener {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The URIs of the `notifications/resources/updated` received, in order. */
  updates: string[];
  errors: Error[];
}

/**
 * An official SDK client of the MCP endpoint at `url` as `token`, collecting the resource updates
 * it is sent; resolves once the server has answered its GET stream (the SDK opens it after
 * initialize).
 */
export async function connectListener(
  url: string,
  token: string,
  options: { name: string; reconnectionOptions?: StreamableHTTPReconnectionOptions },
): Promise<LiveListener> {
  let streamOpen = false;
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.method ?? 'GET') === 'GET' && res.ok) streamOpen = true;
      return res;
    },
    ...(options.reconnectionOptions ? { reconnectionOptions: options.reconnectionOptions } : {}),
  });
  const client = new Client({ name: options.name, version: '1.0.0' });
  const updates: string[] = [];
  const errors: Error[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
  });
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  await until(() => streamOpen, 5000);
  return { client, transport, updates, errors };
}
