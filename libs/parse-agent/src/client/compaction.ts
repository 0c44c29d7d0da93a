import type { LlmMessage, LlmRequest } from '../ports/llm-provider';

/** Marks the history entry that replaced compacted turns. */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation (compacted):\n';

const COMPACTION_SYSTEM_PROMPT = [
  'You condense a conversation between a user and a data assistant so it can continue in less space.',
  'Keep every fact the assistant obtained from tools: counts, totals, identifiers, names, dates, and which',
  'class and filter each came from. Keep what the user asked for and any open question.',
  'Drop greetings, reasoning and repetition. Write plain prose or short bullets, no preamble.',
].join(' ');

/**
 * The history as plain text. Tool calls and results are written out rather than sent as tool blocks,
 * so the summary request needs no tool definitions (some providers refuse tool blocks without them).
 */
export function renderTranscript(history: readonly LlmMessage[]): string {
  const lines: string[] = [];
  for (const message of history) {
    switch (message.role) {
      case 'system':
        lines.push(`[context] ${message.content}`);
        break;
      case 'user':
        lines.push(`User: ${message.content}`);
        break;
      case 'assistant':
        if (message.content) lines.push(`Assistant: ${message.content}`);
        for (const call of message.toolCalls ?? []) {
          lines.push(`Assistant called ${call.name} with ${JSON.stringify(call.arguments)}`);
        }
        break;
      case 'tool':
        lines.push(`Result of ${message.name}: ${message.content}`);
        break;
    }
  }
  return lines.join('\n');
}

/** The one provider request that turns `history` into a summary. */
export function compactionRequest(history: readonly LlmMessage[]): LlmRequest {
  return {
    system: COMPACTION_SYSTEM_PROMPT,
    messages: [
      {
        role: 'user',
        content: `Conversation so far:\n\n${renderTranscript(history)}\n\nWrite the summary now.`,
      },
    ],
  };
}

/** The single history entry that stands for the compacted turns. */
export function summaryMessage(summary: string): LlmMessage {
  return { role: 'system', content: `${SUMMARY_PREFIX}${summary}` };
}

/**
 * Automatic compaction runs before a continued turn once the tokens spent since the last compaction
 * (or reset) reach the budget. Counting since the last compaction keeps it from firing every turn.
 */
export function shouldAutoCompact(
  budget: number | undefined,
  tokensSinceCompaction: number,
  history: readonly LlmMessage[],
): boolean {
  if (budget === undefined) return false;
  if (!history.length) return false;
  // A history that is already just one summary cannot get shorter.
  if (history.length === 1 && history[0].role === 'system') return false;
  return tokensSinceCompaction >= budget;
}
