import type { Command } from 'commander';
import type { CliCommand } from '../cli-command';

/** `parse-agent describe [class]`: what this identity is and may do, or sees of one class. */
export const describeCommand: CliCommand = (program, cli) => {
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
        await cli.withSession(command, async (session) => {
          if (options.text && !className) {
            cli.print(
              `Acting as ${session.principal.label}\n${session.agent.describe({ format: 'text' })}`,
            );
            return;
          }
          const described = className
            ? session.agent.describeFor(className)
            : { acting_as: session.principal.label, ...session.agent.describe() };
          cli.printJson(described);
        });
      },
    );
};
