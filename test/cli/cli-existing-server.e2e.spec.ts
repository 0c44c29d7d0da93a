import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createObject, createUser, defineClass } from '../harness/fixtures';
import { parseRest, testParseConfig } from '../harness/parse-rest';
import { CLI_CWD, cliCommand, cliEnv, closedPort, runCliProcess, type CliRun } from './cli-process';

const MODELS = join(__dirname, 'existing-server.models.ts');
/** Parse's own classes no agent sees whatever the models say (builtin-hidden-classes). */
const INTERNAL = new Set([
  '_Session',
  '_Installation',
  '_Audience',
  '_Idempotency',
  '_PushStatus',
  '_JobStatus',
  '_JobSchedule',
  '_GlobalConfig',
  '_GraphQLConfig',
  '_Hooks',
  '_SCHEMA',
  '_Product',
]);

/** Shell quoting for `script -c`. */
const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/** Runs the CLI with its stdout on a pseudo-terminal (util-linux `script`), as a person sees it. */
function runCliOnTerminal(args: string[], env: Record<string, string>): Promise<CliRun> {
  const { command, args: argv } = cliCommand(args);
  const line = [command, ...argv].map(quote).join(' ');
  return new Promise((done) => {
    execFile(
      'script',
      ['--quiet', '--return', '--command', line, '/dev/null'],
      { env, cwd: CLI_CWD, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        done({ code, stdout: String(stdout).replace(/\r\n/g, '\n'), stderr: String(stderr) });
      },
    );
  });
}

/**
 * The CLI pointed at an existing Parse Server, as an operator exploring it (issue 38): which
 * classes it shows and says it hides, and the start-up check that names a wrong setting before any
 * command runs. The real CLI as a child process against the real Parse Server of the harness.
 */
describe('parse-agent on an existing server (child process, real Parse Server)', () => {
  const className = 'ExistingServerItem';
  let serverClasses: string[];

  beforeAll(async () => {
    await defineClass(className, { label: { type: 'String' } });
    await createObject(className, { label: 'one' });
    await createObject(className, { label: 'two' });
    await defineClass(
      'ExistingServerLocked',
      { label: { type: 'String' } },
      {
        find: {},
        get: {},
        count: {},
        create: {},
        update: {},
        delete: {},
        addField: {},
      },
    );
    // The truth: what Parse Server itself lists with the master key.
    const { results } = await parseRest<{ results: Array<{ className: string }> }>(
      'GET',
      '/schemas',
      undefined,
      { masterKey: true },
    );
    serverClasses = results.map((r) => r.className);
  }, 60_000);

  describe('classes no model declares', () => {
    it('hides them without --models, and says on stderr how many and how to expose them', async () => {
      const run = await runCliProcess(['call', 'get_all_schemas']);
      expect(run.code).toBe(0);
      const data = JSON.parse(run.stdout).data as { total?: number; classes?: unknown[] };
      expect(JSON.stringify(data)).not.toContain(className);
      const unregistered = serverClasses.filter((name) => !INTERNAL.has(name));
      const count = unregistered.length;
      expect(run.stderr).toContain(
        `note: ${count} classes on the Parse server are hidden from agents because no model declares them`,
      );
      expect(run.stderr).toContain('--models (PARSE_AGENT_MODELS)');
      expect(run.stderr).toContain('--expose-unregistered (PARSE_AGENT_EXPOSE_UNREGISTERED=1)');
      // Parse's internal classes are not counted as merely undeclared.
      expect(run.stderr).not.toContain('_Session');
    }, 60_000);

    it('--expose-unregistered lets the operator read them, with a banner saying what it means; internal classes stay hidden', async () => {
      for (const [args, env] of [
        [['--expose-unregistered'], cliEnv()],
        [[], cliEnv({ PARSE_AGENT_EXPOSE_UNREGISTERED: '1' })],
      ] as const) {
        const schemas = await runCliProcess([...args, 'call', 'get_all_schemas'], env);
        expect(schemas.code).toBe(0);
        expect(schemas.stdout).toContain(className);
        expect(schemas.stdout).not.toContain('_Session');
        expect(schemas.stderr).toContain(
          '--expose-unregistered: every class on the Parse server is reachable',
        );
        expect(schemas.stderr).toContain('no ACL, CLP or protectedFields apply');
        expect(schemas.stderr).not.toContain('note:');

        const count = await runCliProcess(
          [...args, 'call', 'count_objects', JSON.stringify({ class_name: className })],
          env,
        );
        expect(count.code).toBe(0);
        expect(JSON.parse(count.stdout).data.count).toBe(2);

        const session = await runCliProcess(
          [...args, 'call', 'count_objects', '{"class_name":"_Session"}'],
          env,
        );
        expect(session.code).toBe(1);
        expect(JSON.parse(session.stdout).success).toBe(false);
      }
    }, 60_000);

    it('refuses --expose-unregistered for a user, naming the master key', async () => {
      const user = await createUser(`exposer-${Date.now()}`);
      const run = await runCliProcess(
        ['--expose-unregistered', 'tools'],
        cliEnv({ PARSE_SESSION_TOKEN: user.sessionToken }),
      );
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(
        '--expose-unregistered (PARSE_AGENT_EXPOSE_UNREGISTERED) is for the operator acting with the master key',
      );
      const bad = await runCliProcess(
        ['tools'],
        cliEnv({ PARSE_AGENT_EXPOSE_UNREGISTERED: 'maybe' }),
      );
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('PARSE_AGENT_EXPOSE_UNREGISTERED must be 1 or 0');
    }, 60_000);
  });

  describe('the start-up check runs before any command', () => {
    let notParse: Server;
    let notParseUrl: string;
    beforeAll(async () => {
      notParse = createServer((_req, res) => res.writeHead(404).end('Cannot GET'));
      await new Promise<void>((resolve) => notParse.listen(0, '127.0.0.1', resolve));
      notParseUrl = `http://127.0.0.1:${(notParse.address() as { port: number }).port}/parse`;
    });
    afterAll(() => new Promise<void>((resolve) => notParse.close(() => resolve())));

    const cases: Array<[string, () => Promise<Record<string, string>>, RegExp]> = [
      [
        'a wrong master key',
        async () => cliEnv({ PARSE_MASTER_KEY: 'not-the-master-key' }),
        /^parse-agent: Start-up check failed: PARSE_MASTER_KEY: Parse Server at \S+ accepted the application id but refused PARSE_MASTER_KEY/m,
      ],
      [
        'a wrong application id',
        async () => cliEnv({ PARSE_APP_ID: 'not-the-app' }),
        /^parse-agent: Start-up check failed: PARSE_APP_ID \(--app-id\): Parse Server at \S+ refused the application id "not-the-app"/m,
      ],
      [
        'a server that is not running',
        async () => cliEnv({ PARSE_SERVER_URL: `http://127.0.0.1:${await closedPort()}/parse` }),
        /^parse-agent: Start-up check failed: PARSE_SERVER_URL \(--server-url\): Parse Server at \S+ cannot be reached \(ECONNREFUSED\)\. Check PARSE_SERVER_URL \(--server-url\)/m,
      ],
      [
        'a URL where no Parse Server is mounted',
        async () => cliEnv({ PARSE_SERVER_URL: notParseUrl }),
        /^parse-agent: Start-up check failed: PARSE_SERVER_URL \(--server-url\): \S+ answered HTTP 404 with a body that is not JSON: no Parse Server is mounted there/m,
      ],
      [
        'a database that is not the one Parse Server uses',
        async () => {
          const uri = new URL(testParseConfig().databaseURI);
          uri.pathname = '/postgres';
          return cliEnv({ POSTGRES_URI: uri.toString() });
        },
        /^parse-agent: Start-up check failed: POSTGRES_URI \(--postgres-uri\): /m,
      ],
    ];

    it.each(cases)(
      'exits 2 naming the setting for %s, for every command, printing nothing on stdout',
      async (_name, envOf, message) => {
        const env = await envOf();
        for (const args of [
          ['tools'],
          ['call', 'count_objects', '{"class_name":"_User"}'],
          ['describe'],
          // stdio too: a desktop client's config with a stale POSTGRES_URI fails at launch.
          ['stdio'],
        ]) {
          const run = await runCliProcess(args, env);
          expect(run).toMatchObject({ code: 2, stdout: '' });
          expect(run.stderr).toMatch(message);
          // The master key is never echoed.
          expect(run.stderr).not.toContain(testParseConfig().masterKey);
        }
      },
      60_000,
    );
  });

  describe('banners and notes', () => {
    const count = [
      '--models',
      MODELS,
      'call',
      'count_objects',
      JSON.stringify({ class_name: 'ExistingServerLocked' }),
    ];
    const banner = 'Acting as the operator with the master key';

    it('off a terminal: one short master-key banner in CLI terms, and the AUDIT trail of each call', async () => {
      const run = await runCliProcess(count);
      expect(run.code).toBe(0);
      expect(run.stderr.split(banner)).toHaveLength(2);
      expect(run.stderr).toContain(
        'set PARSE_SESSION_TOKEN or --username; --quiet hides this line',
      );
      expect(run.stderr).not.toContain('suppressSecurityBanners');
      expect(run.stderr).toMatch(/AUDIT master-key call count_objects/);
    }, 60_000);

    it('on a terminal: the banner once, no AUDIT line per call', async () => {
      const run = await runCliOnTerminal(count, cliEnv());
      expect(run.code).toBe(0);
      expect(run.stdout.split(banner)).toHaveLength(2);
      expect(run.stdout).not.toContain('AUDIT');
    }, 60_000);

    it('--quiet (or PARSE_AGENT_QUIET=1): no banner, note or AUDIT line; errors still', async () => {
      for (const [args, env] of [
        [['--quiet', ...count], cliEnv()],
        [count, cliEnv({ PARSE_AGENT_QUIET: '1' })],
      ] as const) {
        const run = await runCliProcess([...args], env);
        expect(run).toMatchObject({ code: 0, stderr: '' });
        expect(JSON.parse(run.stdout).success).toBe(true);
      }
      const wrong = await runCliProcess(
        ['--quiet', 'tools'],
        cliEnv({ PARSE_MASTER_KEY: 'not-the-master-key' }),
      );
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('PARSE_MASTER_KEY');
    }, 60_000);

    it('chat without a model says what to set, in CLI terms', async () => {
      const run = await runCliProcess(['chat'], cliEnv());
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('chat needs a language model. Set LLM_PROVIDER (one of: openai');
      expect(run.stderr).toContain('LLM_PROVIDER=openai LLM_API_KEY=sk-... parse-agent chat');
      expect(run.stderr).not.toMatch(/forRoot|ask\(\)/);
    }, 60_000);
  });

  describe('on a terminal', () => {
    it('notes that a user’s --tenant is taken unchecked and names --tenant-role; a pipe stays quiet', async () => {
      const user = await createUser(`tenant-claim-${Date.now()}`);
      const env = cliEnv({ PARSE_SESSION_TOKEN: user.sessionToken, PARSE_AGENT_TENANT_ID: 'acme' });
      const args = ['--models', MODELS, 'describe'];
      const shown = await runCliOnTerminal(args, env);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(
        `note: --tenant acme (PARSE_AGENT_TENANT_ID) is taken as given: the CLI cannot check that ${user.username} (session) belongs to it`,
      );
      expect(shown.stdout).toContain(
        "use --tenant-role '{tenant}-staff' (PARSE_AGENT_TENANT_ROLE)",
      );
      const piped = await runCliProcess(args, env);
      expect(piped).toMatchObject({ code: 0, stderr: '' });
      const quiet = await runCliOnTerminal(['--quiet', ...args], env);
      expect(quiet.stdout).not.toContain('note:');
    }, 60_000);

    it('prints Parse Server’s refusal without the untrusted-data wrapper, which a pipe keeps', async () => {
      const user = await createUser(`terminal-${Date.now()}`);
      const env = cliEnv({ PARSE_SESSION_TOKEN: user.sessionToken });
      const args = [
        '--models',
        MODELS,
        'call',
        'query_class',
        '{"class_name":"ExistingServerLocked"}',
      ];
      const piped = await runCliProcess(args, env);
      expect(piped.code).toBe(1);
      expect(JSON.parse(piped.stdout).error).toMatch(
        /<untrusted-data-[0-9a-f]+>\nParse error: Permission denied/,
      );

      const shown = await runCliOnTerminal(args, env);
      expect(shown.code).toBe(1);
      expect(shown.stdout).toContain('Permission denied');
      expect(shown.stdout).not.toMatch(/untrusted-data|treat it as data only/);
    }, 60_000);
  });
});
