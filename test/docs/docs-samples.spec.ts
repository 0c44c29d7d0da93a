import 'reflect-metadata';
import { AgentFields, ParseAgent, ParseClass, type ToolEnvelope } from 'nestjs-parse-agent';
import { createAgentServices, type StandaloneAgentServices } from 'nestjs-parse-agent/mcp';
import { createObject, resetData } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';
import {
  collectSamples,
  KNOWN_MARKERS,
  runnableModule,
  typeCheckSamples,
  where,
  type DocSample,
} from './docs-samples';

/**
 * Every TypeScript sample of the guide compiles under strict TypeScript against the library's
 * sources, and the samples marked ```ts runnable run against the test bed's real Parse Server
 * (see docs-samples.ts for how a block is read). A sample that stops compiling, a marker that is
 * misspelled, a fragment without a reason, or fragments becoming common fail the suite.
 */
const samples = collectSamples();

/** At most this share of the blocks may be fragments (and at least this many are allowed). */
const FRAGMENT_SHARE = 0.1;
const FRAGMENT_FLOOR = 2;

describe('the code samples in docs/', () => {
  it('finds the guide’s samples, each marked only with known markers', () => {
    expect(samples.length).toBeGreaterThan(25);
    const unknown = samples.flatMap((s) =>
      s.markers
        .filter((m) => !KNOWN_MARKERS.has(m))
        .map((m) => `${where(s)}: unknown marker '${m}'`),
    );
    expect(unknown).toEqual([]);
  });

  it('keeps fragments rare, each with its reason in a <!-- fragment: ... --> comment above it', () => {
    const fragments = samples.filter((s) => s.markers.includes('fragment'));
    const unexplained = fragments
      .filter((s) => !s.fragmentReason || s.fragmentReason.length < 15)
      .map((s) => `${where(s)}: say why in <!-- fragment: ... --> on the line above`);
    expect(unexplained).toEqual([]);
    expect(fragments.length).toBeLessThanOrEqual(
      Math.max(FRAGMENT_FLOOR, Math.floor(samples.length * FRAGMENT_SHARE)),
    );
    const stray = samples
      .filter((s) => s.fragmentReason && !s.markers.includes('fragment'))
      .map((s) => `${where(s)}: a fragment reason on a block not marked fragment`);
    expect(stray).toEqual([]);
  });

  it('compiles every sample that is not a fragment under strict TypeScript', () => {
    const checked = samples.filter((s) => !s.markers.includes('fragment'));
    const problems = typeCheckSamples(checked).map((p) => p.message);
    expect(problems).toEqual([]);
  }, 180_000);

  /**
   * The MCP client recipes of docs/mcp-endpoint.md (`<!-- recipe:... -->`) are run, in a process of
   * their own against the demo app, by test/mcp/sdk-recipe.e2e.spec.ts.
   */
  describe('runnable samples, against the test bed’s Parse Server', () => {
    const runnable = samples.filter((s) => s.markers.includes('runnable'));
    let stack: StandaloneAgentServices;

    @ParseClass('Order')
    @AgentFields('status', 'total', 'placedAt', 'tenantId')
    class DocsOrder {}

    beforeAll(async () => {
      await resetData();
      for (const [status, total] of [
        ['paid', 40],
        ['paid', 2],
        ['pending', 99],
      ] as const) {
        await createObject('Order', { status, total, placedAt: new Date('2025-03-04') });
      }
      stack = createAgentServices({
        parse: testParseConnection(),
        models: [DocsOrder],
      });
    });
    afterAll(() => stack?.close());

    it('has some', () => {
      expect(runnable.length).toBeGreaterThanOrEqual(1);
    });

    it.each(runnable.map((s) => [where(s), s] as const))(
      '%s runs, and every tool call it makes succeeds',
      async (_at, sample: DocSample) => {
        const envelopes: ToolEnvelope[] = [];
        const agent = new ParseAgent({}, stack.services);
        const execute = agent.execute.bind(agent);
        agent.execute = async (...args: Parameters<ParseAgent['execute']>) => {
          const envelope = await execute(...args);
          envelopes.push(envelope);
          return envelope;
        };
        const scope: Record<string, unknown> = {
          agent,
          toolRegistry: stack.services.tools,
          events: stack.services.events,
          parse: testParseConnection(),
        };
        const code = runnableModule(sample, Object.keys(scope));
        const module = {
          exports: {} as { run?: (scope: Record<string, unknown>) => Promise<void> },
        };
        // Jest's require: the sample's imports resolve as the suite's do (the library's sources).
        new Function('require', 'module', 'exports', code)(require, module, module.exports);
        await module.exports.run!(scope);
        expect(envelopes.length).toBeGreaterThan(0);
        const failed = envelopes.filter((e) => !e.success);
        expect(failed).toEqual([]);
      },
      60_000,
    );
  });
});
