import { Option, type Command } from 'commander';
import type { CliCommand } from '../cli-command';
import { connectOverStdio, type ConnectOptions } from '../connect/cli-connect';
import { sessionTokenFromFlags } from '../cli-secrets';
import { CLI_ENV, loadEnvFile, type CliGlobalOptions } from '../cli-settings';

/** `parse-agent connect <url>`: MCP over stdio relayed to an app's HTTP endpoint. */
export const connectCommand: CliCommand = (program, cli) => {
  const { env, stdin } = cli;
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
        warn: cli.log,
      });
      cli.setExitCode(
        await connectOverStdio({
          url,
          options,
          globals,
          sessionToken,
          env,
          input: stdin,
          output: cli.stdout,
          log: cli.log,
        }),
      );
    });
};
