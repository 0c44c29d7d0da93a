import type { Writable } from 'node:stream';
import type { ConversationEvent } from '../../client/conversation-result';
import { terminalSafe } from '../terminal-text';
import { PREVIEW, truncate } from './chat-text';
import type { ChatState } from './slash-commands';

/**
 * Answers one question: the model's text streamed as it comes, a progress line while a tool runs
 * (on a terminal; with trace, each call's arguments, outcome and time instead), and what the answer
 * cost. A failure or a cancellation (`signal`) is printed, never thrown.
 */
export async function streamAnswer(
  question: string,
  signal: AbortSignal,
  chat: ChatState,
  output: Writable & { isTTY?: boolean },
): Promise<void> {
  const { conversation } = chat;
  const tty = Boolean(output.isTTY);
  let atLineStart = true;
  let progressShown = false;
  // The only control sequence written: the progress line's own clear.
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
        const args = chat.trace ? ' ' + JSON.stringify(event.arguments) : '';
        if (tty && !chat.trace) {
          clearProgress();
          output.write(terminalSafe(`… running ${event.name}${args}`));
          progressShown = true;
        } else write(`… running ${event.name}${args}\n`);
        break;
      }
      case 'tool_result':
        if (chat.trace) {
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
    for await (const event of conversation.events(question, { reset: false, signal })) {
      onEvent(event);
    }
  } catch (error) {
    clearProgress();
    if (!atLineStart) output.write('\n');
    if (signal.aborted) chat.say('(cancelled)');
    else chat.say(`error: ${chat.describeError(error)}`);
  }
}

function failureText(result: unknown): string {
  const error = (result as { error?: unknown })?.error;
  return truncate(typeof error === 'string' ? error : 'see the envelope', PREVIEW);
}
