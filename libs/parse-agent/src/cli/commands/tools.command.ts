import type { Command } from 'commander';
import type { CliCommand } from '../cli-command';
import { formatTable } from '../format-table';

/** `parse-agent tools`: the tools this identity may call. */
export const toolsCommand: CliCommand = (program, cli) => {
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
      await cli.withSession(command, async (session) => {
        const tools = session.agent.toolDefinitions({ category: options.category }).map((t) => ({
          name: t.name,
          category: t.category,
          permission: t.permission,
          description: t.description,
        }));
        if (options.json) cli.printJson(tools);
        else {
          const short = tools.map((t) => ({ ...t, description: firstSentence(t.description) }));
          cli.print(formatTable(short));
        }
      });
    });
};

function firstSentence(text: string): string {
  return text.split(/(?<=\.)\s/)[0];
}
