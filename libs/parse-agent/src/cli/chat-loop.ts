import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { ParseAgent } from '../agent/parse-agent';
import type { ConversationEvent } from '../client/conversation-result';
import type { ParseAgentConversation } from '../client/parse-agent-conversation';
import { AgentCancelledError } from '../core/errors';
import type { LlmMessage } from '../ports/llm-provider';
import { terminalSafe } from './terminal-text';

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

export const CHAT_COMMANDS: Readonly<Record<string, string>> = Object.freeze({
  '/tools': 'list the tools this identity may call',
  '/usage': 'tokens and cost: session totals and the last question (/cost does the same)',
  '/compact': 'replace the history with a model-written summary (one extra model call)',
  '/reset': 'forget the history and start over',
  '/trace': 'show or hide tool calls, arguments and timings',
  '/history': 'print the conversation so far, one line per turn',
  '/system': 'print the system prompt the model receives',
  '/help': 'this list',
  '/quit': 'leave (also /exit or Ctrl-D)',
});

const PREVIEW = 120;

/**
 * The terminal conversation: each line is a question (answered with streaming text and a progress
 * line while tools run) or a slash command. Errors are printed and the loop goes on; Ctrl-C stops
 * the running question, or leaves at the prompt.
 */
export async function runChatLoop(options: ChatLoopOptions): Promise<void> {
  const { agent, conversation, output } = options;
  const describeError = options.describeError ?? messageOf;
  let trace = options.trace ?? false;
  const tty = Boolean(output.isTTY);
  // The model's words, tool names and arguments, rows quoted in errors: none of it reaches the
  // terminal raw. The only control sequence written is the progress line's own clear (below).
  const say = (text = '') => output.write(terminalSafe(text, 'multiline') + '\n');
  const rl = createInterface({ input: options.input, output, terminal: tty, prompt: '> ' });
  let running: AbortController | undefined;
  rl.on('SIGINT', () => {
    if (running) running.abort(new AgentCancelledError('interrupted from the keyboard'));
    else rl.close();
  });

  for (const line of options.header) say(line);
  say();
  rl.prompt();

  const ask = async (question: string) => {
    running = new AbortController();
    let atLineStart = true;
    let progressShown = false;
    const clearProgress = () => {
      if (progressShown && tty) output.write('\r\x1b[2K');
      progressShown = false;
    };
    const write = (text: string) => {
      clearProgress();
      output.write(terminalSafe(text, 'multiline'));
      atLineStart = text.endsWith('\n');
    };
    const onEvent = (event: ConversationEvent) => {
      switch (event.type) {
        case 'text':
          write(event.text);
          break;
        case 'tool_call': {
          if (!atLineStart) write('\n');
          const args = trace ? ' ' + JSON.stringify(event.arguments) : '';
          if (tty && !trace) {
            clearProgress();
            output.write(terminalSafe(`… running ${event.name}${args}`));
            progressShown = true;
          } else write(`… running ${event.name}${args}\n`);
          break;
        }
        case 'tool_result':
          if (trace) {
            const outcome = event.success ? 'ok' : `failed: ${failureText(event.result)}`;
            write(`  ${event.name} ${outcome} (${event.durationMs} ms)\n`);
          } else clearProgress();
          break;
        case 'compacted':
          write(`(history compacted to keep the conversation within its token budget)\n`);
          break;
        case 'done':
          clearProgress();
          if (!atLineStart) write('\n');
          if (event.result.reachedMaxIterations) {
            write(
              `(stopped after ${conversation.maxIterations} model calls while the model still wanted tools; ask a narrower question or raise LLM_MAX_ITERATIONS)\n`,
            );
          }
          // Every answer says what it cost, so spend is never a surprise (/usage has the totals).
          write(`[${event.result.usage.toString()}]\n`);
          break;
        default:
          break;
      }
    };
    try {
      for await (const event of conversation.events(question, {
        reset: false,
        signal: running.signal,
      })) {
        onEvent(event);
      }
    } catch (error) {
      clearProgress();
      if (!atLineStart) output.write('\n');
      if (running.signal.aborted) say('(cancelled)');
      else say(`error: ${describeError(error)}`);
    } finally {
      running = undefined;
    }
  };

  const command = async (line: string): Promise<boolean> => {
    const [name] = line.split(/\s+/, 1);
    switch (name.toLowerCase()) {
      case '/quit':
      case '/exit':
        return false;
      case '/help':
        for (const [cmd, text] of Object.entries(CHAT_COMMANDS)) say(`${cmd.padEnd(10)} ${text}`);
        break;
      case '/tools':
        for (const tool of [...agent.allowedTools()].sort()) say(tool);
        break;
      case '/usage':
      case '/cost':
        say(`session: ${conversation.usage.toString()}`);
        say(`last:    ${conversation.lastUsage.toString()}`);
        break;
      case '/reset':
        conversation.reset();
        say('History cleared.');
        break;
      case '/trace':
        trace = !trace;
        say(`Trace ${trace ? 'on' : 'off'}.`);
        break;
      case '/system':
        say(conversation.systemPrompt || '(no system prompt)');
        break;
      case '/history': {
        const history = conversation.history;
        if (!history.length) say('(empty)');
        for (const message of history) say(historyLine(message));
        break;
      }
      case '/compact': {
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
        break;
      }
      default:
        say(`Unknown command ${name}. Commands: ${Object.keys(CHAT_COMMANDS).join(' ')}`);
    }
    return true;
  };

  for await (const raw of rl) {
    const line = raw.trim();
    if (line.startsWith('/')) {
      if (!(await command(line))) break;
    } else if (line) {
      await ask(line);
    }
    rl.prompt();
  }
  rl.close();
  say('bye');
}

function failureText(result: unknown): string {
  const error = (result as { error?: unknown })?.error;
  return truncate(typeof error === 'string' ? error : 'see the envelope', PREVIEW);
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

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
