import type { Command } from 'commander';
import { StdioTransport } from '../../transport/stdio/stdio.transport';
import { PARSE_AGENT_VERSION } from '../../version';
import type { CliCommand } from '../cli-command';

/** `parse-agent stdio`: MCP over stdio with the app's keys (the operator's recipe). */
export const stdioCommand: CliCommand = (program, cli) => {
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
      await cli.withSession(
        command,
        async (session) => {
          cli.log(
            `parse-agent ${PARSE_AGENT_VERSION}: MCP over stdio as ${session.principal.label}, ${session.agent.allowedTools().length} tools`,
          );
          const stdio = new StdioTransport({
            agent: session.agent,
            input: cli.stdin,
            output: cli.stdout,
            log: (line) => cli.log(`[parse-agent] ${line}`),
          });
          await stdio.start(session.transportContext);
          await stdio.closed;
        },
        'stdio reads JSON-RPC from it',
      );
    });
};
