import type { ParseAgent } from '../../agent/parse-agent';
import type { ParseAgentConversation } from '../../client/parse-agent-conversation';
import type { LlmMessage } from '../../ports/llm-provider';
import { PREVIEW, truncate } from './chat-text';

/** What the chat's slash commands and its answers read and change. */
export interface ChatState {
  readonly agent: ParseAgent;
  readonly conversation: ParseAgentConversation;
  /** Show each tool call's arguments, outcome and time. */
  trace: boolean;
  /** Prints one line (made terminal-safe). */
  say(text?: string): void;
  /** The line printed for a failed question or command. */
  describeError(error: unknown): string;
}

interface SlashCommand {
  name: string;
  /** Other spellings that run it. */
  aliases?: string[];
  /** Its line in /help. */
  help: string;
  /** Resolves to false to leave the chat. */
  run(chat: ChatState): void | false | Promise<void>;
}

/** The slash commands, in the order /help lists them. */
const SLASH_COMMANDS: readonly SlashCommand[] = [
  {
    name: '/tools',
    help: 'list the tools this identity may call',
    run: ({ agent, say }) => {
      for (const tool of [...agent.allowedTools()].sort()) say(tool);
    },
  },
  {
    name: '/usage',
    aliases: ['/cost'],
    help: 'tokens and cost: session totals and the last question (/cost does the same)',
    run: ({ conversation, say }) => {
      say(`session: ${conversation.usage.toString()}`);
      say(`last:    ${conversation.lastUsage.toString()}`);
    },
  },
  {
    name: '/compact',
    help: 'replace the history with a model-written summary (one extra model call)',
    run: compact,
  },
  {
    name: '/reset',
    help: 'forget the history and start over',
    run: ({ conversation, say }) => {
      conversation.reset();
      say('History cleared.');
    },
  },
  {
    name: '/trace',
    help: 'show or hide tool calls, arguments and timings',
    run: (chat) => {
      chat.trace = !chat.trace;
      chat.say(`Trace ${chat.trace ? 'on' : 'off'}.`);
    },
  },
  {
    name: '/history',
    help: 'print the conversation so far, one line per turn',
    run: ({ conversation, say }) => {
      const history = conversation.history;
      if (!history.length) say('(empty)');
      for (const message of history) say(historyLine(message));
    },
  },
  {
    name: '/system',
    help: 'print the system prompt the model receives',
    run: ({ conversation, say }) => say(conversation.systemPrompt || '(no system prompt)'),
  },
  {
    name: '/help',
    help: 'this list',
    run: ({ say }) => {
      for (const [cmd, text] of Object.entries(CHAT_COMMANDS)) say(`${cmd.padEnd(10)} ${text}`);
    },
  },
  { name: '/quit', aliases: ['/exit'], help: 'leave (also /exit or Ctrl-D)', run: () => false },
];

export const CHAT_COMMANDS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(SLASH_COMMANDS.map((command) => [command.name, command.help])),
);

/** Runs one slash command line; resolves to false when it asks to leave the chat. */
export async function runSlashCommand(line: string, chat: ChatState): Promise<boolean> {
  const [name] = line.split(/\s+/, 1);
  const key = name.toLowerCase();
  const command = SLASH_COMMANDS.find((c) => c.name === key || c.aliases?.includes(key));
  if (!command) {
    chat.say(`Unknown command ${name}. Commands: ${Object.keys(CHAT_COMMANDS).join(' ')}`);
    return true;
  }
  return (await command.run(chat)) !== false;
}

async function compact({ conversation, say, describeError }: ChatState): Promise<void> {
  const before = conversation.usage.totalTokens;
  const turns = conversation.history.length;
  try {
    const summary = await conversation.compact();
    if (!summary) say('Nothing to compact yet.');
    else {
      const spent = conversation.usage.totalTokens - before;
      say(`Compacted ${turns} messages into a summary (${spent} tokens spent):`);
      say(truncate(summary, PREVIEW * 2));
    }
  } catch (error) {
    say(`error: ${describeError(error)}`);
  }
}

function historyLine(message: LlmMessage): string {
  switch (message.role) {
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((c) => c.name).join(', ');
      return `assistant: ${truncate(message.content || (calls ? `(calls ${calls})` : ''), PREVIEW)}`;
    }
    case 'tool':
      return `tool ${message.name}: ${truncate(message.content, PREVIEW)}`;
    default:
      return `${message.role}: ${truncate(message.content, PREVIEW)}`;
  }
}
