import { registerAs } from '@nestjs/config';
import type { LiveQueryOptions, ParseConnectionConfig } from 'nestjs-parse-agent';
import type { LlmProviderOptions } from 'nestjs-parse-agent/llm';

/** The ConfigService namespace of the example's settings: `config.getOrThrow('example')`. */
export const EXAMPLE_CONFIG = 'example';

/** What the example's modules read from ConfigService. */
export interface ExampleConfig {
  /** The Parse Server the agents read (its master key serves schema reads and operator agents). */
  parse: ParseConnectionConfig;
  /**
   * The Parse app's PostgreSQL database. When set, the direct PostgreSQL path serves analytics and
   * aclUser/aclRole agents with ACL, CLP and protectedFields enforced in SQL.
   */
  postgresURI?: string;
  /** The operator key accepted in `X-MCP-API-Key`. */
  mcpApiKey: string;
  /** Tool calls per minute per caller (user or operator). */
  rateLimitPerMinute: number;
  /** The language model behind /chat; default LLM_PROVIDER and friends from the environment. */
  llm?: LlmProviderOptions;
  /** MCP resource subscriptions on Parse LiveQuery (when the Parse Server runs LiveQuery). */
  liveQuery?: LiveQueryOptions;
}

/** The host's settings the example reads (the embedded demo's `DemoSettings` has them all). */
export interface ExampleHostSettings {
  appId: string;
  masterKey: string;
  /** Only for an existing Parse Server that requires one. */
  javascriptKey?: string;
  rateLimitPerMinute: number;
  /** How long MCP calls in flight may finish when the app stops (ms). */
  shutdownGraceMs: number;
}

/** What the host worked out before the app starts: where Parse is, the operator key, the database. */
export interface ExampleRuntime {
  settings: ExampleHostSettings;
  /** Where the app reaches Parse Server (embedded: the in-process mount). */
  parseServerURL: string;
  mcpApiKey: string;
  postgresURI?: string;
  llm?: LlmProviderOptions;
  /** Set when the host runs Parse LiveQuery for these classes. */
  liveQuery?: LiveQueryOptions;
}

/**
 * The example's settings as a ConfigModule `load` entry. An application of your own would read
 * them from its environment here (`registerAs('example', () => ({ parse: { serverURL:
 * process.env.PARSE_SERVER_URL, ... } }))`); the demo's host knows some of them only once it has
 * started Parse Server, so it hands them in.
 */
export function exampleConfig(runtime: ExampleRuntime) {
  const { settings } = runtime;
  const config: ExampleConfig = {
    parse: {
      serverURL: runtime.parseServerURL,
      appId: settings.appId,
      masterKey: settings.masterKey,
      javascriptKey: settings.javascriptKey,
    },
    postgresURI: runtime.postgresURI,
    mcpApiKey: runtime.mcpApiKey,
    rateLimitPerMinute: settings.rateLimitPerMinute,
    llm: runtime.llm,
    liveQuery: runtime.liveQuery,
  };
  return registerAs(EXAMPLE_CONFIG, () => config);
}
