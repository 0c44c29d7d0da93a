import {
  Injectable,
  Logger,
  Module,
  Scope,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentTool,
  ParseAgentConfigError,
  ParseAgentFactory,
  ParseAgentModule,
  type PolicedToolContext,
} from 'nestjs-parse-agent';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { KeyedSlidingWindowRateLimiter } from 'nestjs-parse-agent/stores';
import { createObject } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';

/** Lets only agents bound to tenant acme through; reads the tool context like any guard would. */
class AcmeOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    expect(context.getType()).toBe('parse-agent-tool');
    const toolContext = context.getArgByIndex<PolicedToolContext>(1);
    return toolContext.agent.tenantId === 'acme';
  }
}

@Injectable()
class ReportsService {
  @AgentTool({ name: 'acme_report', description: 'Only for acme agents.' })
  @UseGuards(AcmeOnlyGuard)
  acmeReport(args: unknown, context: PolicedToolContext) {
    return { tenant: context.agent.tenantId };
  }

  calls = 0;

  @AgentTool({
    name: 'probe_count',
    description: 'Counts ToolProbe rows through the calling agent.',
    inputSchema: { type: 'object', properties: { min: { type: 'number' } } },
    category: 'reports',
  })
  async probeCount(args: { min?: number }, { read }: PolicedToolContext) {
    this.calls++;
    const where = args.min === undefined ? {} : { n: { $gte: args.min } };
    return { count: await read.count('ToolProbe', { where }) };
  }

  @AgentTool({ name: 'query_class', description: 'Tries to shadow a built-in.' })
  shadow() {
    return { shadowed: true };
  }
}

@Injectable()
class UnimportedService {
  @AgentTool({ name: 'unimported_tool', description: 'Lives in a module without the library.' })
  run() {
    return { ran: true };
  }
}

/** A feature module that does not import ParseAgentModule: its tools are not discovered. */
@Module({ providers: [UnimportedService] })
class UnrelatedModule {}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedService {
  @AgentTool({ name: 'request_scoped_tool', description: 'Cannot be registered at bootstrap.' })
  run() {
    return { ran: true };
  }
}

/** A feature module that imports the library through forFeature: its tools are discovered. */
@Injectable()
class FeatureService {
  @AgentTool({ name: 'feature_tool', description: 'Lives in a feature module.' })
  run() {
    return { ran: true };
  }
}

@Module({ imports: [ParseAgentModule.forFeature([])], providers: [FeatureService] })
class FeatureModule {}

describe('@AgentTool on Nest providers', () => {
  it('scans only modules that import the library and says how to fix a skipped provider', async () => {
    suppressSecurityBanners();
    const warnings: string[] = [];
    const spy = jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void warnings.push(String(message)));
    try {
      const module = await Test.createTestingModule({
        imports: [
          ParseAgentModule.forRoot({ parse: testParseConnection() }),
          UnrelatedModule,
          FeatureModule,
        ],
        providers: [RequestScopedService],
      }).compile();
      await module.init();
      const tools = module.get(ParseAgentFactory).create().allowedTools();
      expect(tools).toContain('feature_tool');
      expect(tools).not.toContain('unimported_tool');
      expect(tools).not.toContain('request_scoped_tool');
      expect(warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /'unimported_tool' on UnimportedService\.run is skipped: its module UnrelatedModule does not import ParseAgentModule\. Add ParseAgentModule\.forFeature/,
          ),
          expect.stringMatching(
            /'request_scoped_tool' on RequestScopedService\.run is skipped: the provider is request-scoped/,
          ),
        ]),
      );
      await module.close();
    } finally {
      spy.mockRestore();
    }
  });

  it('registers decorated provider methods at bootstrap, with the provider as `this`', async () => {
    suppressSecurityBanners();
    await createObject('ToolProbe', { n: 1 });
    await createObject('ToolProbe', { n: 5 });
    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          rateLimiter: new KeyedSlidingWindowRateLimiter(10_000, 60),
          unregisteredClasses: 'visible',
        }),
      ],
      providers: [ReportsService],
    }).compile();
    await module.init();
    const agent = module.get(ParseAgentFactory).create();
    expect(agent.allowedTools()).toContain('probe_count');
    expect(agent.toolDefinitions({ category: 'reports' }).map((t) => t.name)).toEqual([
      'probe_count',
    ]);
    expect(await agent.execute('probe_count', { min: 2 })).toEqual({
      success: true,
      data: { count: 1 },
    });
    expect(await agent.execute('probe_count', { min: 'x' })).toMatchObject({
      error_code: 'invalid_argument',
    });
    expect(module.get(ReportsService).calls).toBe(1);
    const factory = module.get(ParseAgentFactory);
    expect(await factory.create({ tenantId: 'acme' }).execute('acme_report')).toEqual({
      success: true,
      data: { tenant: 'acme' },
    });
    expect(await factory.create({ tenantId: 'globex' }).execute('acme_report')).toMatchObject({
      success: false,
      error_code: 'access_denied',
    });
    // A built-in name cannot be taken over by a provider.
    const builtin = await agent.execute('query_class', { class_name: 'ToolProbe' });
    expect(builtin.success && (builtin.data as Record<string, unknown>).class_name).toBe(
      'ToolProbe',
    );
    await module.close();
  });

  it('refuses misuse when the class is declared', () => {
    expect(() => {
      class Bad {
        @AgentTool({ name: 'Bad Name', description: 'x' })
        run() {}
      }
      return Bad;
    }).toThrow(ParseAgentConfigError);
    expect(() => {
      class NoDescription {
        @AgentTool({ name: 'ok_name', description: '' })
        run() {}
      }
      return NoDescription;
    }).toThrow(/description is required/);
  });
});
