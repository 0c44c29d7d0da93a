import { ConsoleLogger, Logger, type LoggerService } from '@nestjs/common';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { CORE_MODELS } from '../../src/example/models';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';

/** Every line Nest's Logger receives, with its level and context. */
class CapturingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: unknown; context?: unknown }> = [];
  log(message: unknown, context?: unknown) {
    this.lines.push({ level: 'log', message, context });
  }
  warn(message: unknown, context?: unknown) {
    this.lines.push({ level: 'warn', message, context });
  }
  error(message: unknown, ...rest: unknown[]) {
    this.lines.push({ level: 'error', message, context: rest[rest.length - 1] });
  }
}

/**
 * In a Nest app the library writes through Nest's Logger, so its lines share the app's format
 * (JSON lines in the demo): security banners and tool failures included, none raw on stderr.
 */
describe('library log lines go through the Nest logger', () => {
  let bed: AgentTestBed;
  const logger = new CapturingLogger();
  let stderr: jest.SpyInstance;

  beforeAll(async () => {
    bed = await createAgentTestBed(CORE_MODELS);
    bed.tools.register({
      name: 'always_breaks',
      description: 'Throws an unexpected error.',
      handler: () => {
        throw new TypeError('cannot read properties of undefined');
      },
    });
    Logger.overrideLogger(logger);
    stderr = jest.spyOn(process.stderr, 'write');
  });

  afterAll(async () => {
    stderr.mockRestore();
    Logger.overrideLogger(new ConsoleLogger());
    suppressSecurityBanners();
    await bed.close();
  });

  it('writes the master-key banner as a warning of the ParseAgentSecurity context', () => {
    suppressSecurityBanners(false);
    bed.factory.create();
    const banner = logger.lines.find((l) => l.context === 'ParseAgentSecurity');
    expect(banner).toMatchObject({ level: 'warn' });
    expect(String(banner?.message)).toMatch(
      /^An agent without a session token runs with the master key/,
    );
    expect(stderr.mock.calls.join('')).not.toContain('SECURITY');
  });

  it("writes a tool's unexpected failure as a ParseAgent warning, and answers internal_error", async () => {
    const agent = bed.factory.create();
    const envelope = await agent.execute('always_breaks', {});
    expect(envelope).toMatchObject({ success: false, error_code: 'internal_error' });
    const failed = logger.lines.find(
      (l) => l.context === 'ParseAgent' && String(l.message).startsWith('always_breaks failed:'),
    );
    expect(failed).toMatchObject({ level: 'warn' });
    expect(String(failed?.message)).toContain('TypeError: cannot read properties of undefined');
    expect(stderr.mock.calls.join('')).not.toContain('always_breaks failed');
  });
});
