import { AgentEvents } from '../core/agent-events';
import { DataRouter } from '../data/data-router';
import { ParseRestClient, type ParseConnectionOptions } from '../data/parse-rest/parse-rest-client';
import { ParseRestDataPathProvider } from '../data/parse-rest/parse-rest-data-path';
import { SchemaCache } from '../data/schema-cache';
import { MetadataRegistry } from '../metadata/metadata-registry';
import type { ModelClass } from '../metadata/metadata.types';
import type { ConversationFactory } from '../ports/conversation';
import type { DataPathProvider } from '../ports/data-path';
import { KeyedSlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import type { RateLimiter } from '../ports/rate-limiter';
import { BUILTIN_TOOLS } from '../tools/builtin';
import { ToolRegistry } from '../tools/tool-registry';
import type { AgentServices } from './parse-agent';

export interface CreateAgentServicesOptions {
  parse: ParseConnectionOptions;
  models?: ModelClass[];
  /** Classes to hide by name, for classes without a model. */
  hiddenClasses?: Array<string | { className: string; except?: 'masterKey' }>;
  /** Default: an in-process sliding window per identity (60 calls per 60 s). */
  rateLimiter?: RateLimiter;
  /** How long Parse schemas are cached (ms, default 30 000). */
  schemaCacheTtlMs?: number;
  /** Direct database paths tried alongside Parse REST (see DataRouter). */
  dataPaths?: DataPathProvider[];
  /** Lets `agent.ask()` open conversations (e.g. the client's `conversationFactory()`). */
  conversations?: ConversationFactory;
  warn?: (message: string) => void;
}

export interface StandaloneAgentServices {
  services: AgentServices;
  parse: ParseRestClient;
  /** Releases the keep-alive sockets to Parse Server so the process can exit. */
  close(): void;
}

/**
 * The services agents run on, built without Nest: for scripts, the CLI and other hosts. The Nest
 * module builds the same set from its options.
 */
export function createAgentServices(options: CreateAgentServicesOptions): StandaloneAgentServices {
  const metadata = new MetadataRegistry();
  metadata.register(...(options.models ?? []));
  for (const entry of options.hiddenClasses ?? []) {
    if (typeof entry === 'string') metadata.hide(entry);
    else metadata.hide(entry.className, { except: entry.except });
  }
  const parse = new ParseRestClient(options.parse);
  const schemas = new SchemaCache(parse, options.schemaCacheTtlMs ?? 30_000);
  const data = new DataRouter([new ParseRestDataPathProvider(parse), ...(options.dataPaths ?? [])]);
  const services: AgentServices = {
    data,
    schemas,
    metadata,
    tools: new ToolRegistry(BUILTIN_TOOLS),
    events: new AgentEvents(),
    rateLimiter: options.rateLimiter ?? new KeyedSlidingWindowRateLimiter(),
    warn: options.warn,
    conversations: options.conversations,
  };
  return { services, parse, close: () => parse.close() };
}
