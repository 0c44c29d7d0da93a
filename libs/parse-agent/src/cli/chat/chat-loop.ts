import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ParseAgent } from '../../agent/parse-agent';
import type { ParseAgentConversation } from '../../client/parse-agent-conversation';
import { AgentCancelledError } from '../../core/errors';
import { forTerminal, terminalSafe } from '../terminal-text';
import { streamAnswer } from './chat-answer';
import { runSlashCommand, type ChatState } from './slash-commands';

export interface ChatLoopOptions {
  agent: ParseAgent;
  conversation: ParseAgentConversation;
  input: Readable;
  output: Writable & { isTTY?: boolean };
  /** Lines printed before the first prompt. */
  header: string[];
  /** Print each tool call's arguments, outcome and time. */
  trace?: boolean;
  /** The line printed for a failed question (default: the error's message). */
  describeError?: (error: unknown) => string;
}

/**
 * The terminal conversation: each line is a question (answered with streaming text and a progress
 * line while tools run) or a slash command (see slash-commands.ts). Errors are printed and the loop
 * goes on; Ctrl-C stops the running question, or leaves at the prompt.
 */
export async function runChatLoop(options: ChatLoopOptions): Promise<void> {
  const { output } = options;
  // The model's words, tool names and arguments, rows quoted in errors: none of it reaches the
  // terminal raw.
  const chat: ChatState = {
    agent: options.agent,
    conversation: options.conversation,
    trace: options.trace ?? false,
    // On a terminal, without the untrusted-data marks (for a model, not a person).
    say: (text = '') => output.write(terminalSafe(forTerminal(output, text), 'multiline') + '\n'),
    describeError: options.describeError ?? messageOf,
  };
  const rl = createInterface({
    input: options.input,
    output,
    terminal: Boolean(output.isTTY),
    prompt: '> ',
  });
  let running: AbortController | undefined;
  rl.on('SIGINT', () => {
    if (running) running.abort(new AgentCancelledError('interrupted from the keyboard'));
    else rl.close();
  });

  for (const line of options.header) chat.say(line);
  chat.say();
  rl.prompt();

  for await (const raw of rl) {
    const line = raw.trim();
    if (line.startsWith('/')) {
      if (!(await runSlashCommand(line, chat))) break;
    } else if (line) {
      running = new AbortController();
      try {
        await streamAnswer(line, running.signal, chat, output);
      } finally {
        running = undefined;
      }
    }
    rl.prompt();
  }
  rl.close();
  chat.say('bye');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
