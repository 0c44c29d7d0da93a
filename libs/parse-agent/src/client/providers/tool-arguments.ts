import type { LlmToolCall } from '../../ports/llm-provider';

/** Parses the JSON argument text a model sent; an empty text means no arguments. */
export function toolCallFromText(id: string, name: string, text: string | undefined): LlmToolCall {
  const source = (text ?? '').trim();
  if (!source) return { id, name, arguments: {} };
  try {
    const parsed: unknown = JSON.parse(source);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return { id, name, arguments: parsed as Record<string, unknown> };
    }
    return { id, name, arguments: {}, invalidArguments: 'arguments are not a JSON object' };
  } catch {
    return { id, name, arguments: {}, invalidArguments: 'arguments are not valid JSON' };
  }
}
