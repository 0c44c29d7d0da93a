import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ParseAgentConfigError } from '../core/errors';
import { ParseClass } from '../metadata/decorators/parse-class.decorator';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { KeyedSlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import type { LlmProvider as LlmProviderPort } from '../ports/llm-provider';
import { RateLimiter } from '../ports/rate-limiter';
import { ParseAgentFactory } from './parse-agent.factory';
import { ParseAgentModule } from './parse-agent.module';

/** Nothing listens here: these specs build the module and read its providers, never calling Parse. */
const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

@ParseClass('Invoice')
class InvoiceModel {}

@ParseClass('Shipment')
class ShipmentModel {}

@Module({ imports: [ParseAgentModule.forFeature([InvoiceModel])] })
class BillingModule {}

@Module({ imports: [ParseAgentModule.forFeature([ShipmentModel])] })
class ShippingModule {}

/** An app's own settings service, as forRootAsync would inject it. */
@Injectable()
class AgentSettings {
  readonly permissions = 'write' as const;
  readonly appId = 'from-settings';
}

@Module({ providers: [AgentSettings], exports: [AgentSettings] })
class SettingsModule {}

const fakeLlm: LlmProviderPort = {
  name: 'fake',
  model: 'fake-model',
  complete: async () => ({
    text: '',
    toolCalls: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    model: 'fake-model',
  }),
};

describe('ParseAgentModule (Nest testing module, no server)', () => {
  it('forFeature registers each feature module’s models in the one registry', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ParseAgentModule.forRoot({ parse }), BillingModule, ShippingModule],
    }).compile();
    const registry = moduleRef.get(MetadataRegistry);
    expect(registry.get('Invoice')).toBeDefined();
    expect(registry.get('Shipment')).toBeDefined();
    // Unregistered classes stay hidden by default.
    expect(registry.isHidden('Unlisted', false)).toBe(true);
    await moduleRef.close();
  });

  it('forFeature refuses anything but an array of classes, saying what it expects', () => {
    for (const bad of [InvoiceModel, ['Invoice'], [InvoiceModel, {}]]) {
      expect(() => ParseAgentModule.forFeature(bad as never)).toThrow(ParseAgentConfigError);
      expect(() => ParseAgentModule.forFeature(bad as never)).toThrow(
        /expects an array of decorated model classes/,
      );
    }
  });

  it('forRootAsync builds its options from an injected provider; agents get them as defaults', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRootAsync({
          imports: [SettingsModule],
          inject: [AgentSettings],
          useFactory: (settings: AgentSettings) => ({
            parse: { ...parse, appId: settings.appId },
            defaults: { permissions: settings.permissions },
          }),
        }),
      ],
    }).compile();
    const factory = moduleRef.get(ParseAgentFactory);
    expect(factory.create().permissions).toBe('write');
    // An agent's own options win over the module defaults.
    expect(factory.create({ permissions: 'readonly' }).permissions).toBe('readonly');
    await moduleRef.close();
  });

  it('is global unless isGlobal: false', () => {
    expect(ParseAgentModule.forRoot({ parse }).global).toBe(true);
    expect(ParseAgentModule.forRoot({ parse, isGlobal: false }).global).toBe(false);
  });

  it("uses the app's own rate limiter and language model when the options name them", async () => {
    const limiter = new KeyedSlidingWindowRateLimiter(5, 60);
    const moduleRef = await Test.createTestingModule({
      imports: [ParseAgentModule.forRoot({ parse, rateLimiter: limiter, llmProvider: fakeLlm })],
    }).compile();
    expect(moduleRef.get(RateLimiter)).toBe(limiter);
    expect(moduleRef.get(ParseAgentFactory).conversationsEnabled).toBe(true);
    await moduleRef.close();
  });

  it('defaults to an in-process rate limiter and no language model', async () => {
    const saved = process.env.LLM_PROVIDER;
    delete process.env.LLM_PROVIDER;
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [ParseAgentModule.forRoot({ parse })],
      }).compile();
      expect(moduleRef.get(RateLimiter)).toBeInstanceOf(KeyedSlidingWindowRateLimiter);
      expect(moduleRef.get(ParseAgentFactory).conversationsEnabled).toBe(false);
      await moduleRef.close();
    } finally {
      if (saved !== undefined) process.env.LLM_PROVIDER = saved;
    }
  });
});
