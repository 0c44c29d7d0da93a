import { Command, CommanderError, Option } from 'commander';
import type { Readable, Writable } from 'node:stream';
import { isLlmConfigured, NO_LLM_PROVIDER_MESSAGE } from '../client/conversation-factory';
import { BUILTIN_DATA_PATHS, type DatabaseSetting } from '../composition/data-paths';
import { ParseAgentConversation } from '../client/parse-agent-conversation';
import type { PermissionLevel } from '../core/constants';
import { ParseAgentConfigError } from '../core/errors';
import type { ModelClass } from '../metadata/metadata.types';
import { isTruthyEnv } from '../tools/env-gates';
import { StdioTransport } from '../transport/stdio/stdio.transport';
import { PARSE_AGENT_VERSION } from '../version';
import { chatErrorMessage } from './chat-errors';
import { chatSystemPromptSettings, type ChatPromptFlags } from './chat-system-prompt';
import { runChatLoop } from './chat-loop';
import { connectOverStdio, type ConnectOptions } from './connect/cli-connect';
import { startAgentConsole } from './console-repl';
import { sessionTokenFromFlags, warnDatabaseUrisOnArgv } from './cli-secrets';
import { openCliSession, type CliSession } from './cli-session';
import {
  CLI_ENV,
  CliUsageError,
  loadEnvFile,
  databaseUrisFromFlags,
  positiveIntegerSetting,
  readCliSettings,
  type CliGlobalOptions,
  type CliSettings,
} from './cli-settings';
import { formatTable, rowsOf } from './format-table';
import { loadModels } from './load-models';
import { terminalJson, terminalSafe } from './terminal-text';

/** What `parse-agent serve` asks the HTTP server host for (see the bin entry in nest/). */
export interface CliServeRequest {
  parse: CliSettings['parse'];
  host: string;
  port: number;
  permissions: PermissionLevel;
  sessionToken?: string;
  tenantId?: string;
  models: ModelClass[];
  /** The direct database path (a path's connection string, e.g. POSTGRES_URI), when set. */
  database?: DatabaseSetting;
  /** Streaming tool calls in flight at once (`--max-concurrent-streams`; default the module's). */
  maxConcurrentStreams?: number;
}

/** The flags of `parse-agent serve`. */
interface ServeFlags {
  host?: string;
  port?: string;
  maxConcurrentStreams?: string;
}

export interface CliServer {
  url: string;
  close(): Promise<void>;
}

export interface CliDependencies {
  /**
   * Starts the standalone HTTP MCP server. The server is a Nest application and the CLI sits below
   * the Nest layer, so the bin entry hands this in.
   */
  startServer?: (request: CliServeRequest) => Promise<CliServer>;
  stdin?: Readable;
  stdout?: Writable & { isTTY?: boolean };
  stderr?: Writable;
  env?: Record<string, string | undefined>;
}

const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/**
 * Runs the `parse-agent` command line and resolves to the exit code: 0 done, 1 a tool or request
 * failed, 2 a setting or argument must be fixed. Only long-running commands (chat, serve, stdio)
 * keep the process alive; their promise settles when they end.
 */
export async function runCli(argv: string[], deps: CliDependencies = {}): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  const env = deps.env ?? process.env;
  // Everything the CLI prints on a terminal passes terminalSafe: messages quote data (a user name,
  // a class name, Parse's or a provider's error text) that may hold escape sequences.
  const log = (line: string) => stderr.write(`${terminalSafe(line, 'multiline')}\n`);
  const print = (text: string) => stdout.write(`${terminalSafe(text, 'multiline')}\n`);
  const printJson = (value: unknown) => stdout.write(`${terminalJson(value)}\n`);
  let exitCode: number = EXIT.ok;

  const stdin = deps.stdin ?? process.stdin;
  /** `stdinBusy`: why the command needs stdin for itself (a token cannot come in on it). */
  const settingsOf = async (command: Command, stdinBusy?: string): Promise<CliSettings> => {
    const options = command.optsWithGlobals<CliGlobalOptions>();
    loadEnvFile(options.envFile, env);
    const databaseUris = databaseUrisFromFlags(options);
    warnDatabaseUrisOnArgv(databaseUris, log);
    const sessionToken = await sessionTokenFromFlags(options, { stdin, stdinBusy, warn: log });
    return readCliSettings({ ...options, sessionToken, databaseUris }, env);
  };
  const withSession = async (
    from: Command | CliSettings,
    run: (session: CliSession) => Promise<void>,
    stdinBusy?: string,
  ): Promise<void> => {
    const settings = from instanceof Command ? await settingsOf(from, stdinBusy) : from;
    const session = await openCliSession(settings, log);
    try {
      await run(session);
    } finally {
      await session.close();
    }
  };

  const program = new Command('parse-agent')
    .description(
      'Talk to a Parse Server app’s data as a user or the operator: chat with a language model, call tools, or serve MCP (stdio or HTTP).',
    )
    .version(PARSE_AGENT_VERSION)
    .option('--env-file <path>', 'read settings from this file (default: ./.env when present)')
    .option('--server-url <url>', `Parse Server URL (${CLI_ENV.serverURL})`)
    .option('--app-id <id>', `Parse application id (${CLI_ENV.appId})`)
    .option(
      '--session-token-file <path>',
      `act as the user of the Parse session whose token is the file's first line; - reads it from stdin (or set ${CLI_ENV.sessionToken})`,
    )
    .option(
      '--session-token <token>',
      `the same, on the command line: other local users can read it there (prefer ${CLI_ENV.sessionToken} or --session-token-file)`,
    )
    .option(
      '--username <name>',
      `log in as this user; the password comes from ${CLI_ENV.password} (${CLI_ENV.username})`,
    )
    .addOption(
      new Option(
        '--permissions <level>',
        `tool tier (${CLI_ENV.permissions}, default readonly)`,
      ).choices(['readonly', 'write', 'admin']),
    )
    .option('--tenant <id>', `bind the agent to a tenant (${CLI_ENV.tenantId})`)
    .option(
      '--tenant-role <pattern>',
      `read a user's tenant from their role, e.g. '{tenant}-staff' (${CLI_ENV.tenantRole})`,
    )
    .option(
      '--models <module>',
      `load decorated model classes from a compiled module (${CLI_ENV.models})`,
    )
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (text) => stdout.write(terminalSafe(text, 'multiline')),
      writeErr: (text) => stderr.write(terminalSafe(text, 'multiline')),
    })
    .exitOverride()
    .addHelpText(
      'after',
      `
Without a session token or username the CLI acts as the operator with the master key.
Settings come from the environment or ./.env (see .env.sample). Secrets (the master key, the
session token, PARSE_PASSWORD, ${BUILTIN_DATA_PATHS.map((path) => path.uri.env).join(', ')}, LLM_API_KEY, MCP_API_KEY) belong
there, never on the command line; the session token may also come from a file or stdin
(--session-token-file). Models scoped by tenant need --tenant (or PARSE_AGENT_TENANT_ID).
A desktop user who only has the app's URL and a session token runs \`parse-agent connect <url>\`.

Examples:
  $ parse-agent tools
  $ PARSE_SESSION_TOKEN=r:abc parse-agent call count_objects '{"class_name":"Order"}'
  $ pass show parse/session | parse-agent --session-token-file - describe
  $ parse-agent chat --username alice`,
    );

  // One connection-string flag per database path (--postgres-uri, --mongodb-uri).
  for (const path of BUILTIN_DATA_PATHS) {
    program.option(
      `${path.uri.flag} <uri>`,
      `the ${path.label} database Parse Server stores its data in, for analytics (prefer ${path.uri.env}: the URI holds a password)`,
    );
  }

  program
    .command('chat')
    .description('a terminal conversation with a language model that answers with your data')
    .option('--trace', `show tool calls and timings (${CLI_ENV.chatTrace}=true)`)
    .option(
      '--system <prompt>',
      `replace the default system prompt (${CLI_ENV.systemPrompt}); /system shows the one in use`,
    )
    .option('--system-file <path>', 'replace the default system prompt with this file’s text')
    .option(
      '--system-suffix <text>',
      `append to the system prompt, default or replaced (${CLI_ENV.systemPromptSuffix})`,
    )
    .addHelpText(
      'after',
      `
Needs LLM_PROVIDER (openai, anthropic, openai-compatible, lmstudio, ollama, vllm, deepseek),
LLM_API_KEY, and optionally LLM_MODEL, LLM_BASE_URL, LLM_MAX_ITERATIONS, LLM_AUTO_COMPACT_AT,
LLM_SYSTEM_PROMPT, LLM_SYSTEM_PROMPT_SUFFIX. The default system prompt tells the model whom it
acts for (never the session token), what it can reach and the Parse conventions.
Slash commands: /tools /usage /compact /reset /trace /history /system /help /quit

Example:
  $ LLM_PROVIDER=openai LLM_API_KEY=sk-... parse-agent chat --username alice`,
    )
    .action(async (options: { trace?: boolean } & ChatPromptFlags, command: Command) => {
      const settings = await settingsOf(command, 'chat reads your questions from it');
      if (!isLlmConfigured(env)) throw new CliUsageError(NO_LLM_PROVIDER_MESSAGE);
      const prompt = chatSystemPromptSettings(options, env);
      await withSession(settings, async (session) => {
        const conversation = new ParseAgentConversation(session.agent, {
          env,
          ...prompt,
          user: session.principal.user,
          maxIterations: positiveIntegerSetting(env, CLI_ENV.maxIterations),
          autoCompactAt: positiveIntegerSetting(env, CLI_ENV.autoCompactAt),
        });
        const trace = Boolean(options.trace) || isTruthyEnv(env[CLI_ENV.chatTrace]);
        await runChatLoop({
          agent: session.agent,
          conversation,
          input: deps.stdin ?? process.stdin,
          output: stdout,
          trace,
          describeError: (error) => chatErrorMessage(error, env),
          header: [
            `parse-agent chat — ${conversation.provider.name} / ${conversation.provider.model}`,
            `Acting as ${session.principal.label} | permissions ${settings.permissions}${settings.tenantId ? ` | tenant ${settings.tenantId}` : ''} | trace ${trace ? 'on' : 'off'}`,
            'Ask a question. Commands: /tools /usage /compact /reset /trace /history /system /help /quit',
          ],
        });
      });
    });

  program
    .command('call')
    .description('run one tool and print its result envelope as JSON')
    .argument('<tool>', 'tool name, e.g. query_class (see `parse-agent tools`)')
    .argument('[json-args]', 'the tool arguments as a JSON object', '{}')
    .option('--table', 'print result rows as a table instead of JSON')
    .addHelpText(
      'after',
      `
Exits 0 when the tool succeeded, 1 when it failed (the envelope says why).

Examples:
  $ parse-agent call count_objects '{"class_name":"Order"}'
  $ parse-agent call query_class '{"class_name":"Order","limit":5,"keys":["total","status"]}' --table`,
    )
    .action(
      async (tool: string, jsonArgs: string, options: { table?: boolean }, command: Command) => {
        const args = parseArguments(jsonArgs);
        await withSession(command, async (session) => {
          const envelope = await session.agent.execute(tool, args);
          const rows = options.table && envelope.success ? rowsOf(envelope.data) : undefined;
          if (rows) print(formatTable(rows));
          else {
            if (options.table && envelope.success) log('(no rows in this result; printing JSON)');
            printJson(envelope);
          }
          if (!envelope.success) exitCode = EXIT.failed;
        });
      },
    );

  program
    .command('tools')
    .description('list the tools this identity may call')
    .option('--json', 'print JSON: [{ name, category, permission, description }]')
    .option('--category <name>', 'only this category (schema, query, ...)')
    .addHelpText(
      'after',
      `
Examples:
  $ parse-agent tools
  $ parse-agent tools --json --category query`,
    )
    .action(async (options: { json?: boolean; category?: string }, command: Command) => {
      await withSession(command, async (session) => {
        const tools = session.agent.toolDefinitions({ category: options.category }).map((t) => ({
          name: t.name,
          category: t.category,
          permission: t.permission,
          description: t.description,
        }));
        if (options.json) printJson(tools);
        else {
          const short = tools.map((t) => ({ ...t, description: firstSentence(t.description) }));
          print(formatTable(short));
        }
      });
    });

  program
    .command('describe')
    .description('what this identity is and may do, or what it sees of one class (JSON)')
    .argument('[class]', 'a Parse class name, e.g. Order')
    .option('--text', 'readable lines instead of JSON (without a class)')
    .addHelpText(
      'after',
      `
Examples:
  $ parse-agent describe
  $ parse-agent describe --text
  $ parse-agent describe Order --session-token-file ~/.parse-session`,
    )
    .action(
      async (className: string | undefined, options: { text?: boolean }, command: Command) => {
        await withSession(command, async (session) => {
          if (options.text && !className) {
            print(
              `Acting as ${session.principal.label}\n${session.agent.describe({ format: 'text' })}`,
            );
            return;
          }
          const described = className
            ? session.agent.describeFor(className)
            : { acting_as: session.principal.label, ...session.agent.describe() };
          printJson(described);
        });
      },
    );

  program
    .command('console')
    .description(
      'a JavaScript REPL bound to the agent, with short helpers for tools, queries and prompts',
    )
    .addHelpText(
      'after',
      `
Helpers: help() tools() schemas() t(name, args) q(className, options) count(className, where)
schema(className) describe(className) table(result) dispatch(method, params) prompts()
renderPrompt(name, args), and with LLM_PROVIDER set ask(question) and reply(text).
A line's promise is awaited and its value printed. Every helper acts as this identity.

Examples:
  $ parse-agent console --username alice
  parse-agent> count('Order')
  parse-agent> q('Order', { limit: 3, keys: ['status', 'total'] })`,
    )
    .action(async (_options: unknown, command: Command) => {
      const settings = await settingsOf(command, 'the console reads your input from it');
      await withSession(settings, async (session) => {
        const conversation = isLlmConfigured(env)
          ? new ParseAgentConversation(session.agent, {
              env,
              user: session.principal.user,
              maxIterations: positiveIntegerSetting(env, CLI_ENV.maxIterations),
              autoCompactAt: positiveIntegerSetting(env, CLI_ENV.autoCompactAt),
            })
          : undefined;
        await startAgentConsole({
          agent: session.agent,
          dispatcher: session.dispatcher,
          input: stdin,
          output: stdout,
          conversation,
          noConversationReason: NO_LLM_PROVIDER_MESSAGE,
          header: [
            `parse-agent console ${PARSE_AGENT_VERSION}`,
            `Acting as ${session.principal.label} | permissions ${settings.permissions}${settings.tenantId ? ` | tenant ${settings.tenantId}` : ''} | ${session.agent.allowedTools().length} tools${conversation ? ` | model ${conversation.provider.name} / ${conversation.provider.model}` : ''}`,
          ],
        });
      });
    });

  program
    .command('serve')
    .description('the standalone MCP server over HTTP (/mcp, /health, /tools)')
    .option('--host <host>', `interface to bind (${CLI_ENV.host}, default 127.0.0.1)`)
    .option('--port <port>', `port (${CLI_ENV.port}, default 3001; 0 picks one)`)
    .option(
      '--max-concurrent-streams <n>',
      'streaming tool calls in flight at once; more answer 503 (default 1000)',
    )
    .addHelpText(
      'after',
      `
Binding beyond loopback needs ${CLI_ENV.apiKey}; clients then send it in X-MCP-API-Key.

Examples:
  $ parse-agent serve
  $ MCP_API_KEY=$(openssl rand -hex 24) parse-agent serve --host 0.0.0.0 --port 3001`,
    )
    .action(async (options: ServeFlags, command: Command) => {
      if (!deps.startServer) {
        throw new CliUsageError('This build of the CLI cannot start the HTTP server.');
      }
      const settings = await settingsOf(command);
      const host = options.host ?? env[CLI_ENV.host] ?? '127.0.0.1';
      const rawPort = options.port ?? env[CLI_ENV.port] ?? '3001';
      const port = Number(rawPort);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new CliUsageError(`--port must be an integer from 0 to 65535, got "${rawPort}".`);
      }
      const rawStreams = options.maxConcurrentStreams;
      const streams = rawStreams === undefined ? undefined : Number(rawStreams);
      if (streams !== undefined && !(Number.isInteger(streams) && streams >= 1)) {
        throw new CliUsageError(
          `--max-concurrent-streams must be a positive integer, got "${rawStreams}".`,
        );
      }
      // Resolve the identity once (a username logs in here) and hand the server its session.
      const session = await openCliSession(settings, log);
      await session.close();
      const server = await deps.startServer({
        parse: settings.parse,
        host,
        port,
        permissions: settings.permissions,
        sessionToken: session.agent.sessionToken,
        tenantId: settings.tenantId,
        models: settings.models ? loadModels(settings.models) : [],
        database: settings.database,
        maxConcurrentStreams: streams,
      });
      log(`MCP server listening on ${server.url}/mcp as ${session.principal.label}`);
      await new Promise<void>((resolve) => {
        const stop = () => void server.close().then(resolve, resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });

  program
    .command('stdio')
    .description(
      'MCP over stdio, for Claude Desktop, Cursor and other clients that launch a command',
    )
    .addHelpText(
      'after',
      `
Reads newline-delimited JSON-RPC on stdin and writes only JSON-RPC to stdout; logs go to stderr.

This needs the app's master key: it is the operator's recipe. A user connects to the app's
own endpoint instead (\`parse-agent connect <url>\`), with only a session token.

Example (a client's MCP server entry):
  { "command": "npx", "args": ["parse-agent", "stdio"],
    "env": { "PARSE_SERVER_URL": "...", "PARSE_APP_ID": "...", "PARSE_MASTER_KEY": "...",
             "POSTGRES_URI": "postgres://..." } }`,
    )
    .action(async (_options: unknown, command: Command) => {
      await withSession(
        command,
        async (session) => {
          log(
            `parse-agent ${PARSE_AGENT_VERSION}: MCP over stdio as ${session.principal.label}, ${session.agent.allowedTools().length} tools`,
          );
          const stdio = new StdioTransport({
            agent: session.agent,
            input: deps.stdin ?? process.stdin,
            output: stdout,
            log: (line) => log(`[parse-agent] ${line}`),
          });
          await stdio.start(session.transportContext);
          await stdio.closed;
        },
        'stdio reads JSON-RPC from it',
      );
    });

  program
    .command('connect')
    .description(
      "MCP over stdio relayed to an app's HTTP endpoint: a user needs only its URL and a session token, no Parse keys",
    )
    .argument('<url>', 'the MCP endpoint, e.g. https://app.example.com/mcp')
    .option(
      '--header <header>',
      'an extra request header "Name: value" (repeatable), for apps that ask for one',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--allow-insecure-http',
      'allow plain http:// to a host other than this machine (the credential travels in clear)',
    )
    // The flag's earlier name, kept working.
    .addOption(new Option('--allow-http').hideHelp())
    .addHelpText(
      'after',
      `
Reads newline-delimited JSON-RPC on stdin, POSTs each message to <url> (Streamable HTTP) and
writes the answers and the server's notifications to stdout, one per line. The app decides
what the token may see: its guards, tenant and limits apply as for any HTTP client.

Credentials (one of):
  ${CLI_ENV.sessionToken} or --session-token-file <path>   sent as Authorization: Bearer <token>
  ${CLI_ENV.apiKey}                                         sent as X-MCP-API-Key (an operator key)

Example (a client's MCP server entry):
  { "command": "npx", "args": ["parse-agent", "connect", "https://app.example.com/mcp"],
    "env": { "PARSE_SESSION_TOKEN": "r:..." } }`,
    )
    .action(async (url: string, options: ConnectOptions, command: Command) => {
      const globals = command.optsWithGlobals<CliGlobalOptions>();
      loadEnvFile(globals.envFile, env);
      const sessionToken = await sessionTokenFromFlags(globals, {
        stdin,
        stdinBusy: 'connect relays JSON-RPC from it',
        warn: log,
      });
      exitCode = await connectOverStdio({
        url,
        options,
        globals,
        sessionToken,
        env,
        input: stdin,
        output: stdout,
        log,
      });
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; a bad flag or argument has already been reported.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof ParseAgentConfigError) {
      log(`parse-agent: ${error.message}`);
      return EXIT.usage;
    }
    log(
      `parse-agent: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    );
    return EXIT.failed;
  }
}

function parseArguments(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliUsageError(
      `The tool arguments are not valid JSON (${(error as Error).message}). Quote them for the shell, e.g. '{"class_name":"Order"}'.`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CliUsageError(
      `The tool arguments must be a JSON object, e.g. '{"class_name":"Order"}'.`,
    );
  }
  return value as Record<string, unknown>;
}

function firstSentence(text: string): string {
  return text.split(/(?<=\.)\s/)[0];
}
