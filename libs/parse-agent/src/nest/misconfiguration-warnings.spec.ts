import 'reflect-metadata';
import { Logger, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { resetSecurityBanners } from '../core/security-banner';
import { AgentTenantScope } from '../metadata/decorators/agent-tenant-scope.decorator';
import { ParseClass } from '../metadata/decorators/parse-class.decorator';
import { ParseAgentFactory } from './parse-agent.factory';
import { ParseAgentModule } from './parse-agent.module';

/** Nothing listens here: the module starts, its start-up check fails quietly (logger off). */
const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

@ParseClass('WarnOrder')
@AgentTenantScope('tenantId', { from: (agent) => agent.tenantId })
class WarnOrder {}

@ParseClass('WarnCustomer')
class WarnCustomer {}

@ParseClass('WarnCountry')
class WarnCountry {}

@Module({ imports: [ParseAgentModule.forFeature([WarnCountry])] })
class GeographyModule {}

describe('silent misconfigurations are said once, at module start and agent build', () => {
  // The module routes banners to Nest's logger (context ParseAgentSecurity), as in an app.
  const banners: string[] = [];
  const saved = process.env.PARSE_AGENT_ALLOW_WRITE_TOOLS;
  let spy: jest.SpyInstance;
  beforeEach(() => {
    banners.length = 0;
    resetSecurityBanners();
    spy = jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void banners.push(String(message)));
  });
  afterEach(() => spy.mockRestore());
  afterAll(() => {
    resetSecurityBanners(() => undefined);
    if (saved === undefined) delete process.env.PARSE_AGENT_ALLOW_WRITE_TOOLS;
    else process.env.PARSE_AGENT_ALLOW_WRITE_TOOLS = saved;
  });

  it('names each unscoped visible class, forFeature ones included, once', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({ parse, models: [WarnOrder, WarnCustomer] }),
        GeographyModule,
      ],
    }).compile();
    await moduleRef.init();
    try {
      const named = banners.map((b) => /^Class '(\w+)'/.exec(b)?.[1]).filter(Boolean);
      expect(named.sort()).toEqual(['WarnCountry', 'WarnCustomer']);
    } finally {
      await moduleRef.close();
    }
  });

  it('warns when write tools are on and module defaults switch confirmations off', async () => {
    process.env.PARSE_AGENT_ALLOW_WRITE_TOOLS = 'true';
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse,
          suppressSecurityBanners: false,
          defaults: { permissions: 'admin', confirmationRequired: false },
        }),
      ],
    }).compile();
    await moduleRef.init();
    try {
      expect(banners.filter((b) => b.includes('confirmationRequired: false'))).toHaveLength(1);
      // An agent built with the same settings later does not repeat it.
      moduleRef.get(ParseAgentFactory).create({});
      expect(banners.filter((b) => b.includes('confirmationRequired: false'))).toHaveLength(1);
    } finally {
      await moduleRef.close();
    }
  });

  it('warns when the first such agent is built, where no default said so', async () => {
    process.env.PARSE_AGENT_ALLOW_WRITE_TOOLS = 'true';
    const moduleRef = await Test.createTestingModule({
      imports: [ParseAgentModule.forRoot({ parse })],
    }).compile();
    await moduleRef.init();
    try {
      const factory = moduleRef.get(ParseAgentFactory);
      factory.create({ permissions: 'readonly', confirmationRequired: false });
      expect(banners.some((b) => b.includes('confirmationRequired: false'))).toBe(false);
      factory.create({ permissions: 'write', confirmationRequired: false });
      expect(banners.filter((b) => b.includes('confirmationRequired: false'))).toHaveLength(1);
    } finally {
      await moduleRef.close();
    }
  });
});
