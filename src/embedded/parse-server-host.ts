import type { Express } from 'express';

export interface ParseServerHostOptions {
  databaseURI: string;
  appId: string;
  masterKey: string;
  javascriptKey?: string;
  /** Public URL Parse Server uses to reach itself (cloud code, files). Includes the mount path. */
  serverURL: string;
  /** Cloud code: called with the Parse SDK of the server once it starts (triggers, functions). */
  cloud?: (parse: never) => void | Promise<void>;
  /**
   * Classes Parse Server defines as it starts (its `schema` option), before it answers a request:
   * created when missing, given the fields they lack and these CLPs. Fields and indexes they do not
   * list are kept. Parse closes `addField` on every class (listed or not) when it applies them.
   */
  classes?: readonly ParseClassDefinition[];
  /** Extra Parse Server options merged over ours. */
  extra?: Record<string, unknown>;
}

/** A class as Parse Server's `schema.definitions` and its /schemas endpoint take it. */
export interface ParseClassDefinition {
  className: string;
  fields: Record<string, { type: string; targetClass?: string }>;
  /** The whole CLP: an operation it leaves out is closed to clients. */
  classLevelPermissions: Record<string, unknown>;
}

export interface ParseServerHost {
  /** Express app to mount (e.g. at `/parse`). */
  app: Express;
  /** Closes Parse Server's database connections. Call after the HTTP server stopped. */
  shutdown(): Promise<void>;
}

interface PgPool {
  totalCount: number;
  on(event: 'error', listener: (error: unknown) => void): void;
}

interface ParseServerInstance {
  app: Express;
  start(): Promise<unknown>;
  config: {
    databaseController: {
      adapter: { handleShutdown(): Promise<void> | void; _client?: { $pool?: PgPool } };
    };
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Options that settle every deprecation warning of parse-server 9 on its future default, so the
 * console stays readable and behaviour will not change under us at the next major.
 */
const SETTLED_DEPRECATIONS = {
  fileUpload: { allowedFileUrlDomains: [] },
  pages: { encodePageParamHeaders: true },
  readOnlyMasterKeyIps: ['127.0.0.1', '::1'],
  requestComplexity: {
    includeDepth: 10,
    includeCount: 100,
    subqueryDepth: 10,
    queryDepth: 10,
    graphQLDepth: 20,
    graphQLFields: 200,
    batchRequestLimit: 100,
  },
  protectedFieldsOwnerExempt: false,
  protectedFieldsTriggerExempt: true,
  protectedFieldsSaveResponseExempt: false,
  installation: { duplicateDeviceTokenActionEnforceAuth: true },
  allowAggregationForReadOnlyMasterKey: false,
};

/**
 * Loads parse-server (about a second of CPU: a caller can do it while it waits on something else,
 * such as PostgreSQL starting). startParseServer loads it too when nobody did.
 */
export function loadParseServer(): {
  ParseServer: new (opts: Record<string, unknown>) => ParseServerInstance;
} {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('parse-server');
}

/** A running Parse LiveQuery server (see startLiveQueryServer). */
export interface LiveQueryServerHost {
  /** Closes its sockets and its pub/sub subscriber. */
  shutdown(): Promise<void>;
}

/**
 * Parse's LiveQuery server on an HTTP server that already serves Parse Server (it takes the
 * WebSocket upgrades); Parse Server must list the classes in its `liveQuery.classNames` option.
 */
export async function startLiveQueryServer(
  httpServer: import('node:http').Server,
  options: { appId: string; masterKey: string; serverURL: string },
): Promise<LiveQueryServerHost> {
  const { ParseServer } = loadParseServer() as unknown as {
    ParseServer: {
      createLiveQueryServer(
        server: import('node:http').Server,
        config: Record<string, unknown>,
        parseConfig: Record<string, unknown>,
      ): Promise<LiveQueryServerHost>;
    };
  };
  return ParseServer.createLiveQueryServer(httpServer, options, { appId: options.appId });
}

/** Builds and starts an in-process Parse Server (parse-server 9) ready to be mounted on express. */
export async function startParseServer(options: ParseServerHostOptions): Promise<ParseServerHost> {
  const { ParseServer } = loadParseServer();
  const server = new ParseServer({
    ...SETTLED_DEPRECATIONS,
    databaseURI: options.databaseURI,
    appId: options.appId,
    masterKey: options.masterKey,
    javascriptKey: options.javascriptKey,
    serverURL: options.serverURL,
    ...(options.cloud ? { cloud: options.cloud } : {}),
    ...(options.classes
      ? { schema: { definitions: options.classes, keepUnknownIndexes: true } }
      : {}),
    masterKeyIps: ['127.0.0.1', '::1', '::ffff:127.0.0.1'],
    allowClientClassCreation: false,
    enforcePrivateUsers: true,
    silent: true,
    logLevel: 'error',
    logsFolder: null, // no log files in the working directory
    ...options.extra,
  });
  await server.start();
  return {
    app: server.app,
    shutdown: async () => {
      const adapter = server.config.databaseController.adapter;
      // The Postgres adapter ends its pool without awaiting it; wait for the connections to close so
      // stopping PostgreSQL right after cannot surface "terminating connection" errors.
      const pool = adapter._client?.$pool;
      pool?.on('error', () => undefined);
      await adapter.handleShutdown();
      for (let i = 0; pool && pool.totalCount > 0 && i < 150; i++) await sleep(20);
    },
  };
}
