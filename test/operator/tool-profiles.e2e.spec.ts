import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  ParseAgentConfigError,
  ParseAgentFactory,
  ParseAgentModule,
  TOOL_PROFILES,
  type AgentOptions,
  type PermissionLevel,
} from 'nestjs-parse-agent';
import { PERMISSION_LEVELS } from 'nestjs-parse-agent/tools/tool-tiers';
import { suppressSecurityBanners } from 'nestjs-parse-agent/core/security-banner';
import { CORE_MODELS } from '../../src/example/models';
import { testParseConfig, testParseConnection } from '../harness/parse-rest';

/**
 * Issue 36 item 2: named tool profiles, seen through the official MCP SDK client's tools/list.
 * The agent factory reads the profile and tier from request headers, so each listing is one real
 * MCP session against the real Parse Server; what a profile offers must be exactly the tier's
 * full listing cut to the profile's names (never a tool the tier lacks).
 */
describe('tool profiles (tools: "lean" and friends) over MCP', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    suppressSecurityBanners();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: CORE_MODELS,
          postgres: { uri: testParseConfig().databaseURI },
          rateLimiter: { check: () => undefined },
          suppressSecurityBanners: true,
          startupCheck: 'off',
          agentFactory: (request): AgentOptions => {
            const header = (name: string) => {
              const value = request.headers[name];
              return typeof value === 'string' ? value : undefined;
            };
            const profile = header('x-test-profile');
            return {
              permissions: (header('x-test-tier') ?? 'readonly') as PermissionLevel,
              ...(profile ? { tools: profile as AgentOptions['tools'] } : {}),
            };
          },
          mcp: { path: '/mcp' },
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/mcp`;
  });

  afterAll(() => app?.close());

  async function listTools(tier: PermissionLevel, profile?: string): Promise<string[]> {
    const headers: Record<string, string> = { 'x-test-tier': tier };
    if (profile) headers['x-test-profile'] = profile;
    const client = new Client({ name: 'profiles-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    try {
      return (await client.listTools()).tools.map((t) => t.name).sort();
    } finally {
      await client.close();
    }
  }

  const tiers: PermissionLevel[] = ['readonly', 'write', 'admin'];
  const profiles = Object.keys(TOOL_PROFILES) as Array<keyof typeof TOOL_PROFILES>;

  it('every profile at every tier lists exactly the tier’s tools cut to the profile', async () => {
    for (const tier of tiers) {
      const full = await listTools(tier);
      expect(full.length).toBeGreaterThan(6);
      for (const profile of profiles) {
        const names: readonly string[] | undefined = TOOL_PROFILES[profile];
        const listed = await listTools(tier, profile);
        const expected = names ? full.filter((t) => names.includes(t)) : full;
        expect({ tier, profile, listed }).toEqual({ tier, profile, listed: expected });
        // Narrowing only: nothing beyond the tier's own tools, whatever the profile names.
        for (const tool of listed) expect(PERMISSION_LEVELS[tier]).toContain(tool);
      }
    }
  });

  it('lean is the six core read tools, and a write profile gives a readonly agent no write tool', async () => {
    expect(await listTools('readonly', 'lean')).toEqual([
      'aggregate',
      'count_objects',
      'get_all_schemas',
      'get_object',
      'get_schema',
      'query_class',
    ]);
    const readonlyWrites = await listTools('readonly', 'writes');
    expect(readonlyWrites).not.toContain('create_object');
    expect(readonlyWrites).not.toContain('update_object');
    const writeWrites = await listTools('write', 'writes');
    expect(writeWrites).toEqual(expect.arrayContaining(['create_object', 'update_object']));
    expect(writeWrites).not.toContain('delete_object');
  });

  it('a lean agent refuses a tool outside the profile even when called by name', async () => {
    const agent = app.get(ParseAgentFactory).create({ tools: 'lean' });
    const envelope = await agent.execute('distinct', { class_name: 'Customer', field: 'tier' });
    expect(envelope).toMatchObject({ success: false, error_code: 'tool_filtered' });
    expect(agent.describe()).toMatchObject({ tools: { profile: 'lean' } });
  });

  it('an unknown profile is an error naming the option, never the full surface', async () => {
    const factory = app.get(ParseAgentFactory);
    expect(() => factory.create({ tools: 'leen' as 'lean' })).toThrow(ParseAgentConfigError);
    expect(() => factory.create({ tools: 'leen' as 'lean' })).toThrow(
      /tools: unknown tool profile "leen"/,
    );
    // Over MCP the agent factory's error refuses the session: no tools/list at all.
    await expect(listTools('readonly', 'leen')).rejects.toThrow();
  });

  it('a sub-agent of a lean agent cannot widen with full', () => {
    const lean = app.get(ParseAgentFactory).create({ tools: 'lean' });
    expect(lean.subAgent({ tools: 'full' }).allowedTools().sort()).toEqual(
      lean.allowedTools().sort(),
    );
    expect(lean.subAgent({ tools: 'analytics' }).allowedTools()).not.toContain('group_by');
  });

  it('forRoot refuses an unknown profile in defaults at boot, naming defaults.tools', async () => {
    const boot = Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          startupCheck: 'off',
          defaults: { tools: 'slim' as 'lean' },
        }),
      ],
    }).compile();
    await expect(boot).rejects.toThrow(/defaults\.tools: unknown tool profile "slim"/);
  });
});
