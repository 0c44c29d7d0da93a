import { ParseAgentConfigError } from '../core/errors';
import { unwrapUntrusted, wrapUntrusted } from '../core/untrusted-data';
import type { LlmMessage, LlmToolCall } from '../ports/llm-provider';
import { isPlainObject } from '../core/plain-object';

/** The format version `toJSON()` writes and `restore()` reads. */
export const CONVERSATION_SNAPSHOT_VERSION = 1;

/** Default cap on the number of messages a restored history may hold. */
export const DEFAULT_RESTORE_MAX_MESSAGES = 200;

/** Default cap on the size of a restored snapshot, as JSON in UTF-8 bytes (512 KiB). */
export const DEFAULT_RESTORE_MAX_BYTES = 512 * 1024;

/** A message a snapshot may carry: never a system message. */
export type SnapshotMessage = Exclude<LlmMessage, { role: 'system' }>;

/**
 * A conversation's history as plain JSON, for an app to carry between stateless requests. It holds
 * no system prompt, identity, tools or permissions: those come from the agent it is restored onto.
 */
export interface ConversationSnapshot {
  version: typeof CONVERSATION_SNAPSHOT_VERSION;
  messages: SnapshotMessage[];
}

export interface RestoreLimits {
  /** Most messages accepted (default 200). */
  maxMessages?: number;
  /** Most bytes accepted, the snapshot measured as JSON in UTF-8 (default 524288). */
  maxBytes?: number;
}

/** The history as a snapshot: a compaction summary (a system message inside) travels as user text. */
export function snapshotOf(messages: readonly LlmMessage[]): ConversationSnapshot {
  return {
    version: CONVERSATION_SNAPSHOT_VERSION,
    messages: structuredClone(messages).map((message) =>
      message.role === 'system' ? { role: 'user', content: message.content } : message,
    ),
  };
}

function refuse(detail: string): never {
  throw new ParseAgentConfigError(`Cannot restore the conversation: ${detail}`);
}

function onlyKeys(value: Record<string, unknown>, allowed: string[], where: string): void {
  const extra = Object.keys(value).filter((key) => !allowed.includes(key));
  if (extra.length) refuse(`${where} has unexpected field(s) ${extra.join(', ')}.`);
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string') refuse(`${where} must be a string.`);
  return value;
}

function limit(value: number | undefined, fallback: number, name: string): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < 1) {
    throw new ParseAgentConfigError(`${name} must be a positive integer, got ${String(value)}.`);
  }
  return chosen;
}

/**
 * Checks untrusted snapshot data (it came from a client) and returns the history to continue
 * from. Refuses, naming the rule: another version, too many messages or bytes, a role other than
 * user/assistant/tool, a malformed message, a tool result that answers no open tool call, or a tool
 * call left unanswered. Tool results are wrapped again as untrusted data under a fresh tag.
 */
export function historyFromSnapshot(data: unknown, limits: RestoreLimits = {}): LlmMessage[] {
  const maxMessages = limit(limits.maxMessages, DEFAULT_RESTORE_MAX_MESSAGES, 'maxMessages');
  const maxBytes = limit(limits.maxBytes, DEFAULT_RESTORE_MAX_BYTES, 'maxBytes');
  let serialized: string | undefined;
  try {
    serialized = JSON.stringify(data);
  } catch {
    refuse('the snapshot is not plain JSON.');
  }
  const bytes = Buffer.byteLength(serialized ?? '', 'utf8');
  if (bytes > maxBytes) {
    refuse(
      `it is ${bytes} bytes, over the maxBytes limit of ${maxBytes}. Compact the conversation before exporting it, or raise maxBytes.`,
    );
  }
  if (!isPlainObject(data)) refuse('the snapshot must be the object toJSON() returned.');
  onlyKeys(data, ['version', 'messages'], 'the snapshot');
  if (data.version !== CONVERSATION_SNAPSHOT_VERSION) {
    refuse(
      `version ${String(data.version)} is not supported (expected ${CONVERSATION_SNAPSHOT_VERSION}).`,
    );
  }
  if (!Array.isArray(data.messages)) refuse('messages must be an array.');
  if (data.messages.length > maxMessages) {
    refuse(
      `it has ${data.messages.length} messages, over the maxMessages limit of ${maxMessages}. Compact the conversation before exporting it, or raise maxMessages.`,
    );
  }
  const history: LlmMessage[] = [];
  const seenCallIds = new Set<string>();
  let open = new Map<string, string>();
  data.messages.forEach((raw: unknown, index: number) => {
    const where = `message ${index}`;
    if (!isPlainObject(raw)) refuse(`${where} must be an object.`);
    const role = raw.role;
    if (role !== 'tool' && open.size) {
      refuse(
        `${where} follows tool call(s) ${[...open.keys()].join(', ')} that have no tool result.`,
      );
    }
    switch (role) {
      case 'user':
        onlyKeys(raw, ['role', 'content'], where);
        history.push({ role, content: text(raw.content, `${where}.content`) });
        return;
      case 'assistant': {
        onlyKeys(raw, ['role', 'content', 'toolCalls'], where);
        const content = text(raw.content, `${where}.content`);
        if (raw.toolCalls === undefined) {
          history.push({ role, content });
          return;
        }
        if (!Array.isArray(raw.toolCalls) || !raw.toolCalls.length) {
          refuse(`${where}.toolCalls must be a non-empty array when present.`);
        }
        const toolCalls: LlmToolCall[] = raw.toolCalls.map((call: unknown, n: number) => {
          const at = `${where}.toolCalls[${n}]`;
          if (!isPlainObject(call)) refuse(`${at} must be an object.`);
          onlyKeys(call, ['id', 'name', 'arguments'], at);
          const id = text(call.id, `${at}.id`);
          if (!id || seenCallIds.has(id)) refuse(`${at}.id must be a non-empty id used once.`);
          seenCallIds.add(id);
          if (!isPlainObject(call.arguments)) refuse(`${at}.arguments must be an object.`);
          return { id, name: text(call.name, `${at}.name`), arguments: call.arguments };
        });
        open = new Map(toolCalls.map((call) => [call.id, call.name]));
        history.push({ role, content, toolCalls });
        return;
      }
      case 'tool': {
        onlyKeys(raw, ['role', 'toolCallId', 'name', 'content', 'isError'], where);
        const toolCallId = text(raw.toolCallId, `${where}.toolCallId`);
        const name = text(raw.name, `${where}.name`);
        if (open.get(toolCallId) !== name) {
          refuse(
            `${where} answers tool call '${toolCallId}' (${name}), which is not an unanswered call of the assistant message before it.`,
          );
        }
        open.delete(toolCallId);
        if (raw.isError !== undefined && typeof raw.isError !== 'boolean') {
          refuse(`${where}.isError must be a boolean.`);
        }
        // The client could have written anything here: one fresh untrusted block around it all.
        const content = wrapUntrusted(unwrapUntrusted(text(raw.content, `${where}.content`)));
        history.push({
          role,
          toolCallId,
          name,
          content,
          ...(raw.isError === true ? { isError: true } : {}),
        });
        return;
      }
      default:
        refuse(
          `${where} has role ${JSON.stringify(role)}; only user, assistant and tool messages can be restored (the system prompt comes from the agent).`,
        );
    }
  });
  if (open.size) refuse(`tool call(s) ${[...open.keys()].join(', ')} have no tool result.`);
  return history;
}
