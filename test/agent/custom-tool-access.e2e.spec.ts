import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentTool,
  bindAgentToPrincipal,
  ParseAgentAuthGuard,
  ParseAgentFactory,
  ParseAgentModule,
  ToolRegistry,
  type PolicedToolContext,
  type ToolContext,
} from 'nestjs-parse-agent';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { CORE_MODELS, SupportTicket } from '../../src/example/models';
import { seedDemo } from '../harness/demo-data';
import { ok } from '../harness/envelopes';
import { findRows, testParseConfig, testParseConnection } from '../harness/parse-rest';

const OPERATOR_KEY = 'custom-tool-access-operator-key';

/** An operator's tool that reads the tenants' API credentials with the master key. */
@Injectable()
class CredentialTools {
  @AgentTool({
    name: 'credential_services',
    description: 'Lists the services each tenant holds API credentials for (operator only).',
    access: 'master',
  })
  async services(_args: unknown, context: ToolContext) {
    const rows = await context.data.find(
      'ApiCredential',
      { where: {}, keys: ['tenantId', 'service', 'apiKey'], limit: 100 },
      context.signal,
    );
    return { count: rows.length, keys: rows.map((row) => row.apiKey) };
  }
}

interface McpToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
}

/**
 * Issue 31, item 6, on the demo data with the real Parse Server and PostgreSQL: an application
 * tool that declares nothing reads and writes through the calling agent's own policy (what Parse
 * REST gives that user, cut to the agent's tenant and allowlists), and a tool that declares
 * `access: 'master'` is never offered to, nor run for, a session-token, aclUser or aclRole agent.
 */
describe('custom tools: policed by default, master access only when declared', () => {
  let app: INestApplication;
  let url: string;
  let factory: ParseAgentFactory;
  let tokens: { alice: string; bob: string; carol: string };

  beforeAll(async () => {
    suppressSecurityBanners();
    tokens = await seedDemo();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: [...CORE_MODELS, SupportTicket],
          postgres: { uri: testParseConfig().databaseURI },
          rateLimiter: { check: () => undefined },
          suppressSecurityBanners: true,
          auth: { apiKey: OPERATOR_KEY, tenant: { fromRole: '{tenant}-staff' } },
          agentFactory: bindAgentToPrincipal({ userPermissions: 'write' }),
          mcp: { path: '/mcp', guards: [ParseAgentAuthGuard] },
        }),
      ],
      providers: [CredentialTools],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false, forceCloseConnections: true });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/mcp`;
    factory = app.get(ParseAgentFactory);
    const tools = app.get(ToolRegistry);

    // Declares nothing: the policed default. Asks for every ticket it can get.
    tools.register({
      name: 'ticket_ids',
      description: 'Every support ticket the caller may read, by id and tenant.',
      handler: async (_args, { read }: PolicedToolContext) => {
        const page = await read.find('SupportTicket', { keys: ['tenantId'], limit: 1000 });
        return { tickets: page.rows.map((r) => ({ id: r.objectId, tenantId: r.tenantId })) };
      },
    });
    tools.register({
      name: 'customer_contacts',
      description: 'Customers with whatever contact fields the caller may read.',
      handler: async (_args, { read }: PolicedToolContext) => ({
        rows: (await read.find('Customer', { keys: ['name', 'email'], limit: 50 })).rows,
      }),
    });
    tools.register({
      name: 'raw_reach',
      description: 'Reaches for a raw data path without declaring it.',
      handler: async (_args, context) =>
        (context as unknown as ToolContext).data.count('SupportTicket', {}),
    });
    tools.register({
      name: 'close_ticket',
      description: 'Closes a ticket by id.',
      permission: 'write',
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
      },
      handler: async (args: { id: string }, { write }: PolicedToolContext) =>
        write.update('SupportTicket', args.id, { status: 'closed' }),
    });
    tools.register({
      name: 'readonly_writer',
      description: 'A readonly tool that tries to write.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
      handler: async (args: { id?: string }, { write }: PolicedToolContext) =>
        write.update('SupportTicket', String(args.id), { status: 'closed' }),
    });
  }, 120_000);

  afterAll(() => app?.close());

  const master = { masterKey: true } as const;
  const idsOf = (rows: Array<Record<string, unknown>>) => rows.map((r) => r.objectId as string);

  async function connect(headers: Record<string, string>): Promise<Client> {
    const client = new Client({ name: 'custom-tool-access', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
    );
    return client;
  }

  async function callOver(client: Client, name: string, args: Record<string, unknown> = {}) {
    const result = (await client.callTool({ name, arguments: args })) as unknown as McpToolResult;
    return { isError: result.isError === true, text: unwrapUntrusted(result.content[0].text) };
  }

  describe('a tool that declares nothing', () => {
    it("reads only what Parse REST gives alice, within her tenant (never the master key's rows)", async () => {
      const all = await findRows('SupportTicket', {}, master, { limit: '1000' });
      const hers = await findRows(
        'SupportTicket',
        {},
        { sessionToken: tokens.alice },
        { limit: '1000' },
      );
      // Rows alice cannot read exist (admin-only acme tickets, every globex ticket).
      const unreadable = idsOf(all).filter((id) => !idsOf(hers).includes(id));
      expect(unreadable.length).toBeGreaterThan(0);

      const client = await connect({ Authorization: `Bearer ${tokens.alice}` });
      try {
        const result = await callOver(client, 'ticket_ids');
        expect(result.isError).toBe(false);
        const got = (
          JSON.parse(result.text) as { tickets: Array<{ id: string; tenantId: string }> }
        ).tickets;
        expect(got.map((t) => t.id).sort()).toEqual(
          hers
            .filter((r) => r.tenantId === 'acme')
            .map((r) => r.objectId as string)
            .sort(),
        );
        for (const id of unreadable) expect(result.text).not.toContain(id);
      } finally {
        await client.close();
      }
    });

    it("keeps carol's agent to her tenant although Parse would give her admin role both", async () => {
      const restCarol = await findRows(
        'SupportTicket',
        {},
        { sessionToken: tokens.carol },
        { limit: '1000' },
      );
      const globex = restCarol.filter((r) => r.tenantId === 'globex');
      expect(globex.length).toBeGreaterThan(0);
      const carol = factory.create({ sessionToken: tokens.carol, tenantId: 'acme' });
      const result = await carol.execute('ticket_ids');
      const got = ok(result).tickets as Array<{ id: string; tenantId: string }>;
      expect(got.length).toBeGreaterThan(0);
      expect(got.every((t) => t.tenantId === 'acme')).toBe(true);
      for (const row of globex) expect(JSON.stringify(result)).not.toContain(row.objectId);
    });

    it('withholds the fields Parse protects from alice and the allowlist leaves out', async () => {
      const alice = factory.create({ sessionToken: tokens.alice, tenantId: 'acme' });
      const result = await alice.execute('customer_contacts');
      const rows = ok(result).rows as Array<Record<string, unknown>>;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((row) => row.email === undefined && row.phone === undefined)).toBe(true);
      const emails = (await findRows('Customer', {}, master, { limit: '1000' })).map(
        (r) => r.email,
      );
      for (const email of emails.filter(Boolean)) {
        expect(JSON.stringify(result)).not.toContain(email as string);
      }
    });

    it('refuses a reach for a raw data path, saying how to declare it', async () => {
      const operator = factory.create({});
      const result = await operator.execute('raw_reach');
      expect(result).toMatchObject({ success: false, error_code: 'invalid_configuration' });
      expect(!result.success && result.error).toMatch(/declare access: 'master'/i);
    });

    it("writes at alice's identity and policy: her tenant's ticket yes, another tenant's no", async () => {
      const hers = (
        await findRows(
          'SupportTicket',
          { tenantId: 'acme', status: 'open' },
          { sessionToken: tokens.alice },
          { limit: '1' },
        )
      )[0];
      const globexTicket = (
        await findRows('SupportTicket', { tenantId: 'globex', status: 'open' }, master, {
          limit: '1',
        })
      )[0];
      const alice = factory.create({
        sessionToken: tokens.alice,
        tenantId: 'acme',
        permissions: 'write',
      });
      expect(await alice.execute('close_ticket', { id: hers.objectId })).toMatchObject({
        success: true,
        data: { changedKeys: ['status'] },
      });
      const after = await findRows('SupportTicket', { objectId: hers.objectId }, master);
      expect(after[0].status).toBe('closed');

      const refused = await alice.execute('close_ticket', { id: globexTicket.objectId });
      expect(refused.success).toBe(false);
      const untouched = await findRows(
        'SupportTicket',
        { objectId: globexTicket.objectId },
        master,
      );
      expect(untouched[0].status).toBe('open');

      // A readonly tool has no write access at all, whatever the agent's tier.
      expect(await alice.execute('readonly_writer', { id: hers.objectId })).toMatchObject({
        success: false,
        error_code: 'access_denied',
      });
    });
  });

  describe("a tool that declares access: 'master'", () => {
    it("is absent from alice's tools/list and refused when she calls it", async () => {
      const client = await connect({ Authorization: `Bearer ${tokens.alice}` });
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain('ticket_ids');
        expect(names).not.toContain('credential_services');
        const result = await callOver(client, 'credential_services');
        expect(result.isError).toBe(true);
        expect(result.text).toMatch(/only available to master-key agents/);
        expect(result.text).not.toMatch(/sk_live_|ship_/);
      } finally {
        await client.close();
      }
    });

    it('is never offered to a session-token, aclUser or aclRole agent, nor a scoped sub-agent', async () => {
      const aliceId = (await findRows('_User', { username: 'alice' }, master))[0]
        .objectId as string;
      const scoped = [
        factory.create({ sessionToken: tokens.alice, tenantId: 'acme' }),
        factory.create({ aclUser: aliceId, tenantId: 'acme' }),
        factory.create({ aclRole: 'acme-staff', tenantId: 'acme' }),
        factory.create({}).subAgent({ sessionToken: tokens.bob, tenantId: 'globex' }),
      ];
      for (const agent of scoped) {
        expect(agent.allowedTools()).not.toContain('credential_services');
        expect(agent.wouldPermit('credential_services')).toMatchObject({
          allowed: false,
          denied_at: 'master_access',
        });
        const result = await agent.execute('credential_services');
        expect(result).toMatchObject({ success: false, error_code: 'access_denied' });
        expect(JSON.stringify(result)).not.toMatch(/sk_live_|ship_/);
      }
    });

    it('works for the operator (a master-key agent), over MCP too', async () => {
      const credentials = await findRows('ApiCredential', {}, master);
      const client = await connect({ 'X-MCP-API-Key': OPERATOR_KEY });
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain(
          'credential_services',
        );
        const result = await callOver(client, 'credential_services');
        expect(result.isError).toBe(false);
        expect(JSON.parse(result.text)).toMatchObject({ count: credentials.length });
      } finally {
        await client.close();
      }
    });
  });
});
