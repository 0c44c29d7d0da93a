import 'reflect-metadata';
import {
  Injectable,
  Logger,
  Module,
  UnauthorizedException,
  UseGuards,
  UseInterceptors,
  forwardRef,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { map, type Observable } from 'rxjs';
import { AgentTool } from '../tools/agent-tool.decorator';
import { ToolRegistry } from '../tools/tool-registry';
import { ParseAgentFactory } from './parse-agent.factory';
import { ParseAgentModule } from './parse-agent.module';

/** No Parse Server is reached: these tools read no data. */
const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

/** Wraps a tool's result, proving interceptors on an @AgentTool method run around it. */
class EnvelopeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((result) => ({ wrapped: result, type: context.getType() })));
  }
}

class SessionRequiredGuard {
  canActivate(): boolean {
    throw new UnauthorizedException('no session');
  }
}

@Injectable()
class ClockService {
  guardedRuns = 0;

  @AgentTool({ name: 'clock', description: 'Tells a fixed time.' })
  @UseInterceptors(EnvelopeInterceptor)
  now() {
    return { at: '2025-01-01T00:00:00Z' };
  }

  @AgentTool({ name: 'guarded', description: 'Needs a session.' })
  @UseGuards(SessionRequiredGuard)
  guarded() {
    this.guardedRuns++;
    return { ran: true };
  }

  @AgentTool({ name: 'shared_name', description: 'Registered first.' })
  first() {
    return { from: 'ClockService' };
  }

  notATool() {
    return 'never registered';
  }
}

@Injectable()
class DuplicateService {
  @AgentTool({ name: 'shared_name', description: 'Same name, found second.' })
  second() {
    return { from: 'DuplicateService' };
  }
}

/** Imports the library through forwardRef: still a module that imports it. */
@Injectable()
class LateService {
  @AgentTool({ name: 'late_tool', description: 'In a module importing the library lazily.' })
  run() {
    return { late: true };
  }
}

@Module({ imports: [forwardRef(() => ParseAgentModule.forFeature([]))], providers: [LateService] })
class LateModule {}

describe('AgentToolExplorer (Nest testing module, no server)', () => {
  let moduleRef: TestingModule;
  const warnings: string[] = [];

  beforeAll(async () => {
    jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void warnings.push(String(message)));
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse,
          unregisteredClasses: 'visible',
          suppressSecurityBanners: true,
        }),
        LateModule,
      ],
      providers: [ClockService, DuplicateService],
    }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef.close();
    jest.restoreAllMocks();
  });

  const agent = () => moduleRef.get(ParseAgentFactory).create();

  it('registers decorated methods only, running interceptors around them in the tool context type', async () => {
    const registry = moduleRef.get(ToolRegistry);
    expect(registry.get('clock')).toBeDefined();
    expect(registry.customTools().map((t) => t.name)).not.toContain('notATool');
    await expect(agent().execute('clock')).resolves.toEqual({
      success: true,
      data: { wrapped: { at: '2025-01-01T00:00:00Z' }, type: 'parse-agent-tool' },
    });
  });

  it('turns a guard’s UnauthorizedException into access_denied, and the method never runs', async () => {
    const result = await agent().execute('guarded');
    expect(result).toMatchObject({ success: false, error_code: 'access_denied' });
    expect(moduleRef.get(ClockService).guardedRuns).toBe(0);
  });

  it('keeps the first of two tools with one name and warns how to fix the second', async () => {
    const result = await agent().execute('shared_name');
    expect(result).toEqual({ success: true, data: { from: 'ClockService' } });
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /'shared_name' on DuplicateService\.second is skipped: a tool with that name is already registered\. Rename one of them\./,
        ),
      ]),
    );
  });

  it('finds tools in a module that imports the library through forwardRef', async () => {
    await expect(agent().execute('late_tool')).resolves.toEqual({
      success: true,
      data: { late: true },
    });
  });
});
