import type { Command } from 'commander';
import { EXIT, type CliCommand } from '../cli-command';
import { CliUsageError } from '../cli-settings';
import { formatTable, rowsOf } from '../format-table';

/** `parse-agent call <tool> [json-args]`: one tool call, its envelope printed. */
export const callCommand: CliCommand = (program, cli) => {
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
        await cli.withSession(command, async (session) => {
          const envelope = await session.agent.execute(tool, args);
          const rows = options.table && envelope.success ? rowsOf(envelope.data) : undefined;
          if (rows) cli.print(formatTable(rows));
          else {
            if (options.table && envelope.success)
              cli.log('(no rows in this result; printing JSON)');
            cli.printJson(envelope);
          }
          if (!envelope.success) cli.setExitCode(EXIT.failed);
        });
      },
    );
};

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
