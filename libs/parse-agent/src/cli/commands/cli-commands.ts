import type { CliCommand } from '../cli-command';
import { callCommand } from './call.command';
import { chatCommand } from './chat.command';
import { connectCommand } from './connect.command';
import { consoleCommand } from './console.command';
import { describeCommand } from './describe.command';
import { embedCommand } from './embed.command';
import { serveCommand } from './serve.command';
import { stdioCommand } from './stdio.command';
import { toolsCommand } from './tools.command';

/** The `parse-agent` commands, in the order `--help` lists them. A new command is one line here. */
export const CLI_COMMANDS: readonly CliCommand[] = [
  chatCommand,
  callCommand,
  toolsCommand,
  describeCommand,
  consoleCommand,
  serveCommand,
  stdioCommand,
  connectCommand,
  embedCommand,
];
