import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AgentEvents,
  MetadataRegistry,
  ParseAgentFactory,
  ParseAgentModule,
  ToolRegistry,
  type ModelClass,
  type ParseAgentModuleOptions,
} from 'nestjs-parse-agent';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { KeyedSlidingWindowRateLimiter } from 'nestjs-parse-agent/stores';
import { testParseConnection } from './parse-rest';

export interface AgentTestBed {
  module: TestingModule;
  factory: ParseAgentFactory;
  events: AgentEvents;
  metadata: MetadataRegistry;
  tools: ToolRegistry;
  close(): Promise<void>;
}

/** A Nest testing module with ParseAgentModule pointed at the test run's real Parse Server. */
export async function createAgentTestBed(
  models: ModelClass[],
  extra: Partial<ParseAgentModuleOptions> = {},
): Promise<AgentTestBed> {
  suppressSecurityBanners();
  const module = await Test.createTestingModule({
    imports: [
      ParseAgentModule.forRoot({
        parse: testParseConnection(),
        models,
        schemaCacheTtlMs: 0,
        // Suites make hundreds of calls as one identity; rate limiting has its own tests.
        rateLimiter: new KeyedSlidingWindowRateLimiter(100_000, 60),
        ...extra,
      }),
    ],
  }).compile();
  await module.init();
  return {
    module,
    factory: module.get(ParseAgentFactory),
    events: module.get(AgentEvents),
    metadata: module.get(MetadataRegistry),
    tools: module.get(ToolRegistry),
    close: () => module.close(),
  };
}
