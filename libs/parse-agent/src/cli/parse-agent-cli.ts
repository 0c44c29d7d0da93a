import { Command, CommanderError, Option } from 'commander';
import type { Writable } from 'node:stream';
import { BUILTIN_DATA_PATHS } from '../composition/data-paths';
import { ParseAgentConfigError } from '../core/errors';
import { PARSE_AGENT_VERSION } from '../version';
import { EXIT, type CliContext, type CliDependencies } from './cli-command';
import { sessionTokenFromFlags, warnDatabaseUrisOnArgv } from './cli-secrets';
import { openCliSession } from './cli-session';
import {
  CLI_ENV,
  databaseUrisFromFlags,
  loadEnvFile,
  readCliSettings,
  type CliGlobalOptions,
  type CliSettings,
} from './cli-settings';
import { CLI_COMMANDS } from './commands/cli-commands';
import { terminalJson, terminalSafe, unwrapDeep } from './terminal-text';

export type { CliDependencies, CliServeRequest, CliServer } from './cli-command';

/**
 * Runs the `parse-agent` command line and resolves to the exit code: 0 done, 1 a tool or request
 * failed, 2 a setting or argument must be fixed. Only long-running commands (chat, serve, stdio)
 * keep the process alive; their promise settles when they end.
 */
export async function runCli(argv: string[], deps: CliDependencies = {}): Promise<number> {
  const stdout = deps.stdout ?? process.stdout;
  const stderr = deps.stderr ?? process.stderr;
  let exitCode: number = EXIT.ok;
  const cli = cliContext(deps, stderr, (code) => (exitCode = code));
  const program = createProgram(stdout, stderr);
  for (const add of CLI_COMMANDS) add(program, cli);

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; a bad flag or argument has already been reported.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof ParseAgentConfigError) {
      cli.log(`parse-agent: ${error.message}`);
      return EXIT.usage;
    }
    cli.log(
      `parse-agent: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`,
    );
    return EXIT.failed;
  }
}

/**
 * What the commands share. Everything the CLI prints on a terminal passes terminalSafe: messages
 * quote data (a user name, a class name, Parse's or a provider's error text) that may hold escape
 * sequences.
 */
function cliContext(
  deps: CliDependencies,
  stderr: Writable,
  setExitCode: (code: number) => void,
): CliContext {
  const stdout = deps.stdout ?? process.stdout;
  const stdin = deps.stdin ?? process.stdin;
  const env = deps.env ?? process.env;
  // The untrusted-data marks are for a model reading the output; a person on a terminal gets
  // the text without them (a pipe keeps them: a script may hand the output to a model).
  const forPeople = <T>(value: T): T =>
    (stdout as { isTTY?: boolean }).isTTY ? unwrapDeep(value) : value;
  const log = (line: string) =>
    void stderr.write(`${terminalSafe(forPeople(line), 'multiline')}\n`);
  const settingsOf = async (command: Command, stdinBusy?: string): Promise<CliSettings> => {
    const options = command.optsWithGlobals<CliGlobalOptions>();
    loadEnvFile(options.envFile, env);
    const databaseUris = databaseUrisFromFlags(options);
    warnDatabaseUrisOnArgv(databaseUris, log);
    const sessionToken = await sessionTokenFromFlags(options, { stdin, stdinBusy, warn: log });
    return readCliSettings({ ...options, sessionToken, databaseUris }, env);
  };
  return {
    deps,
    stdin,
    stdout,
    env,
    log,
    print: (text) => void stdout.write(`${terminalSafe(forPeople(text), 'multiline')}\n`),
    printJson: (value) => void stdout.write(`${terminalJson(forPeople(value))}\n`),
    settingsOf,
    withSession: async (from, run, stdinBusy) => {
      const settings = from instanceof Command ? await settingsOf(from, stdinBusy) : from;
      const session = await openCliSession(
        settings,
        log,
        Boolean((stderr as { isTTY?: boolean }).isTTY),
      );
      try {
        await run(session);
      } finally {
        await session.close();
      }
    },
    setExitCode,
  };
}

/** The program with its global options and help; the commands add themselves (CLI_COMMANDS). */
function createProgram(stdout: Writable, stderr: Writable): Command {
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
    .option(
      '--impersonate <userId>',
      'as the operator (master key), act as this _User with an active session of theirs, so Parse applies their ACLs, CLPs and protectedFields',
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
    .option('--quiet', `no banners or notes on stderr, only errors (${CLI_ENV.quiet}=1)`)
    .option(
      '--expose-unregistered',
      `operator only: let the master-key agent reach classes no model declares (${CLI_ENV.exposeUnregistered}=1; default hidden)`,
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
Classes no model declares are hidden; --models loads your models, --expose-unregistered shows
every class to the operator.
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
  return program;
}
