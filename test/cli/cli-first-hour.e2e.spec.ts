import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn } from 'node:child_process';
import { unwrapUntrusted } from 'nestjs-parse-agent/mcp';
import type { LoopbackLlmServer, ScriptedReply } from '../client/loopback-llm-server';
import { startOpenAiLoopback } from '../client/loopback-openai-server';
import { DEMO_PASSWORD, seedDemo } from '../harness/demo-data';
import { parseRest, testParseConfig } from '../harness/parse-rest';
import {
  CLI_CWD,
  cliCommand,
  cliEnv,
  closedPort,
  DEMO_MODELS,
  runCliProcess,
  runCliWithInput,
} from './cli-process';

type Groups = { groups: Array<{ key: unknown; value: number }> };

/**
 * What an adopter meets in the first hour with the CLI, on the real Parse Server and its real
 * PostgreSQL: analytics through POSTGRES_URI, the tenant a user must name, login and model-server
 * failures that say what is wrong, and the cost of every chat answer. The model is a loopback
 * server speaking the OpenAI HTTP API.
 */
describe('parse-agent first hour (child process, real Parse Server and PostgreSQL)', () => {
  let tokens: { alice: string };
  const models = ['--models', DEMO_MODELS];
  const groupByStatus = ['call', 'group_by', '{"class_name":"Order","field":"status"}'];

  beforeAll(async () => {
    tokens = await seedDemo();
  }, 60_000);

  const asAlice = (extra: Record<string, string> = {}) =>
    cliEnv({ PARSE_SESSION_TOKEN: tokens.alice, PARSE_AGENT_TENANT_ID: 'acme', ...extra });

  describe('POSTGRES_URI: the direct database path', () => {
    it('answers a user’s group_by from SQL, within the user’s tenant (refused without it)', async () => {
      const without = await runCliProcess([...models, ...groupByStatus], asAlice());
      expect(without.code).toBe(1);
      expect(JSON.parse(without.stdout).success).toBe(false);

      const run = await runCliProcess(
        [...models, ...groupByStatus],
        asAlice({ POSTGRES_URI: testParseConfig().databaseURI }),
      );
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const { groups } = JSON.parse(run.stdout).data as Groups;
      expect(groups.length).toBeGreaterThan(1);
      // alice's tenant only: the other tenant's 1470 orders are not in the sum.
      expect(groups.reduce((sum, g) => sum + g.value, 0)).toBe(1470);

      const perTenant = await runCliProcess(
        [...models, 'call', 'group_by', '{"class_name":"Order","field":"tenantId"}'],
        asAlice({ POSTGRES_URI: testParseConfig().databaseURI }),
      );
      expect(JSON.parse(perTenant.stdout).data.groups).toEqual([{ key: 'acme', value: 1470 }]);
    }, 60_000);

    it('takes --postgres-uri with a warning that never shows the URI', async () => {
      const uri = testParseConfig().databaseURI;
      const run = await runCliProcess(
        [...models, '--postgres-uri', uri, ...groupByStatus],
        asAlice(),
      );
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/--postgres-uri puts the connection string .* Set POSTGRES_URI/);
      expect(run.stderr).not.toContain(uri);
    }, 30_000);

    it('refuses both databases and a malformed URI without echoing it', async () => {
      const both = await runCliProcess(
        ['describe'],
        cliEnv({
          POSTGRES_URI: 'postgres://u:secret@h/db',
          MONGODB_URI: 'mongodb://u:secret@h/db',
        }),
      );
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/Set one database: POSTGRES_URI .* MONGODB_URI/);
      const bad = await runCliProcess(['describe'], cliEnv({ POSTGRES_URI: 'u:secret@h/db' }));
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/POSTGRES_URI must be a postgres:\/\//);
      expect(bad.stderr + both.stderr).not.toContain('secret');
    }, 30_000);

    it('serves analytics over stdio too (official MCP SDK client)', async () => {
      const { command, args } = cliCommand([...models, 'stdio']);
      const transport = new StdioClientTransport({
        command,
        args,
        env: asAlice({ POSTGRES_URI: testParseConfig().databaseURI }),
        cwd: CLI_CWD,
        stderr: 'pipe',
      });
      const client = new Client({ name: 'first-hour', version: '1.0.0' });
      await client.connect(transport);
      try {
        const result = (await client.callTool({
          name: 'group_by',
          arguments: { class_name: 'Order', field: 'tenantId' },
        })) as { isError?: boolean; content: Array<{ text: string }> };
        expect(result.isError).toBeFalsy();
        const data = JSON.parse(unwrapUntrusted(result.content[0].text)) as Groups;
        expect(data.groups).toEqual([{ key: 'acme', value: 1470 }]);
      } finally {
        await client.close();
      }
    }, 60_000);
    it('serves analytics from `serve` too (official MCP SDK client over HTTP)', async () => {
      const { command, args } = cliCommand([...models, 'serve', '--port', '0']);
      const child = spawn(command, args, {
        env: asAlice({ POSTGRES_URI: testParseConfig().databaseURI }),
        cwd: CLI_CWD,
      });
      let stderr = '';
      const listening = new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          const url = /MCP server listening on (http:\/\/\S+\/mcp)/.exec(stderr);
          if (url) resolve(url[1]);
        });
        child.on('exit', () => reject(new Error(`serve exited early:\n${stderr}`)));
      });
      const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
      try {
        const client = new Client({ name: 'first-hour', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(await listening)));
        const result = (await client.callTool({
          name: 'group_by',
          arguments: { class_name: 'Order', field: 'tenantId' },
        })) as { isError?: boolean; content: Array<{ text: string }> };
        expect(result.isError).toBeFalsy();
        const data = JSON.parse(unwrapUntrusted(result.content[0].text)) as Groups;
        expect(data.groups).toEqual([{ key: 'acme', value: 1470 }]);
        await client.close();
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited).toBe(0);
    }, 60_000);
  });

  describe('the tenant of a user', () => {
    it('refuses a user without --tenant when the models scope classes by tenant, naming the flag', async () => {
      const run = await runCliProcess(
        [...models, 'call', 'count_objects', '{"class_name":"Order"}'],
        cliEnv({ PARSE_SESSION_TOKEN: tokens.alice }),
      );
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(
        /alice \(session\) has no tenant, and the models scope .*Order.* by tenant \(@AgentTenantScope\)\. When users belong to tenants through roles, pass --tenant-role '\{tenant\}-staff' \(PARSE_AGENT_TENANT_ROLE\).*Otherwise pass --tenant <id> \(PARSE_AGENT_TENANT_ID\)/,
      );
    }, 30_000);

    it('reads the tenant from the user’s role with --tenant-role, never from a field she can edit', async () => {
      // alice may rewrite her own _User.tenantId; the role membership is the operator's.
      const me = await parseRest<{ objectId: string }>('GET', '/users/me', undefined, {
        sessionToken: tokens.alice,
      });
      await parseRest(
        'PUT',
        `/users/${me.objectId}`,
        { tenantId: 'globex' },
        { sessionToken: tokens.alice },
      );
      const count = ['call', 'count_objects', '{"class_name":"Order"}'];
      const byRole = await runCliProcess(
        [...models, '--tenant-role', '{tenant}-staff', ...count],
        cliEnv({ PARSE_SESSION_TOKEN: tokens.alice }),
      );
      expect(byRole.stderr).toBe('');
      expect(JSON.parse(byRole.stdout).data.count).toBe(1470);
      const fromEnv = await runCliProcess(
        [...models, ...count],
        cliEnv({ PARSE_SESSION_TOKEN: tokens.alice, PARSE_AGENT_TENANT_ROLE: '{tenant}-staff' }),
      );
      expect(JSON.parse(fromEnv.stdout).data.count).toBe(1470);
      const disagree = await runCliProcess(
        [...models, '--tenant-role', '{tenant}-staff', '--tenant', 'globex', ...count],
        cliEnv({ PARSE_SESSION_TOKEN: tokens.alice }),
      );
      expect(disagree.code).toBe(2);
      expect(disagree.stdout).toBe('');
      expect(disagree.stderr).toMatch(/--tenant globex .* does not match .*'acme'/);
      const noRole = await runCliProcess(
        [...models, '--tenant-role', '{tenant}-owners', ...count],
        cliEnv({ PARSE_SESSION_TOKEN: tokens.alice }),
      );
      expect(noRole.code).toBe(2);
      expect(noRole.stderr).toMatch(/has no tenant under --tenant-role '\{tenant\}-owners'/);
    }, 60_000);

    it('lets the operator through without a tenant when the models let it bypass the scope', async () => {
      const run = await runCliProcess(
        [...models, 'call', 'count_objects', '{"class_name":"Order"}'],
        cliEnv(),
      );
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).data.count).toBe(2940);
    }, 30_000);
  });

  describe('login errors', () => {
    it('blames the server, not the password, when Parse Server is down', async () => {
      const port = await closedPort();
      const run = await runCliProcess(
        ['describe'],
        cliEnv({
          PARSE_SERVER_URL: `http://127.0.0.1:${port}/parse`,
          PARSE_USERNAME: 'alice',
          PARSE_PASSWORD: DEMO_PASSWORD,
        }),
      );
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        new RegExp(
          `Start-up check failed: PARSE_SERVER_URL \\(--server-url\\): Parse Server at http://127\\.0\\.0\\.1:${port}/parse cannot be reached \\(ECONNREFUSED\\)\\. Check PARSE_SERVER_URL`,
        ),
      );
      expect(run.stderr).not.toMatch(/PARSE_PASSWORD|\.\./);
    }, 30_000);

    it('names the credentials for a wrong password, in one sentence ending once', async () => {
      const run = await runCliProcess(
        ['describe'],
        cliEnv({ PARSE_USERNAME: 'alice', PARSE_PASSWORD: 'not-her-password' }),
      );
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /Could not log in as alice: Invalid username\/password\. Check PARSE_USERNAME \(--username\) and PARSE_PASSWORD\./,
      );
      expect(run.stderr).not.toMatch(/\.\./);
    }, 30_000);

    it('says the server is down, not that the session token is bad', async () => {
      const port = await closedPort();
      const run = await runCliProcess(
        ['describe'],
        cliEnv({ PARSE_SERVER_URL: `http://127.0.0.1:${port}/parse`, PARSE_SESSION_TOKEN: 'r:x' }),
      );
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /Start-up check failed: PARSE_SERVER_URL \(--server-url\): Parse Server at .* cannot be reached/,
      );
      expect(run.stderr).not.toMatch(/refused|\.\./);
    }, 30_000);
  });

  describe('chat (model: loopback server speaking the OpenAI HTTP API)', () => {
    let llm: LoopbackLlmServer | undefined;
    afterAll(() => llm?.close());

    const chatEnv = (baseURL: string) =>
      asAlice({
        LLM_PROVIDER: 'openai',
        LLM_API_KEY: 'sk-loopback',
        LLM_MODEL: 'gpt-4o-mini',
        LLM_BASE_URL: baseURL,
      });

    it('prints the tokens and cost of every answer, with tracing off', async () => {
      const reply: ScriptedReply = { text: 'Hello there.', usage: { input: 120, output: 12 } };
      llm = await startOpenAiLoopback([reply]);
      const run = await runCliWithInput([...models, 'chat'], chatEnv(llm.baseURL), 'Hi\n/quit\n');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/trace off/);
      expect(run.stdout).toMatch(/Hello there\.\n\[120 in \+ 12 out = 132 tokens \$\d/);
    }, 60_000);

    it('names LLM_BASE_URL and the cause when the model server cannot be reached', async () => {
      const baseURL = `http://127.0.0.1:${await closedPort()}/v1`;
      const run = await runCliWithInput([...models, 'chat'], chatEnv(baseURL), 'Hi\n/quit\n');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        `error: openai: could not connect to the language model server at ${baseURL} (LLM_BASE_URL) (ECONNREFUSED). Check LLM_BASE_URL and LLM_PROVIDER, and that the server is running.`,
      );
      expect(run.stdout).not.toMatch(/error: .*Connection error\.$/m);
    }, 60_000);
  });
});
