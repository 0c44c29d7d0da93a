import type { ServerResponse } from 'node:http';
import {
  argumentsText,
  halves,
  startLoopbackLlmServer,
  type LoopbackLlmServer,
  type ReplyScript,
  type ScriptedReply,
} from './loopback-llm-server';

/** A loopback server speaking the Anthropic Messages HTTP API (JSON and SSE streaming). */
export function startAnthropicLoopback(
  script: ReplyScript | ScriptedReply[],
): Promise<LoopbackLlmServer> {
  // The SDK's base URL is the API root; it requests /v1/messages itself.
  return startLoopbackLlmServer('/v1/messages', '', script, answer);
}

function answer(reply: ScriptedReply, body: Record<string, unknown>, res: ServerResponse): void {
  const model = String(body.model);
  const usage = reply.usage ?? { input: 10, output: 5 };
  const calls = reply.toolCalls ?? [];
  const stopReason = calls.length ? 'tool_use' : 'end_turn';
  const content: Array<Record<string, unknown>> = [];
  if (reply.text) content.push({ type: 'text', text: reply.text });
  for (const c of calls) {
    content.push({
      type: 'tool_use',
      id: c.id,
      name: c.name,
      input: typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments,
    });
  }
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'msg_loopback',
        type: 'message',
        role: 'assistant',
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  send('message_start', {
    message: {
      id: 'msg_loopback',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: 1 },
    },
  });
  let index = 0;
  if (reply.text) {
    send('content_block_start', { index, content_block: { type: 'text', text: '' } });
    for (const word of reply.text.split(/(?<= )/)) {
      send('content_block_delta', { index, delta: { type: 'text_delta', text: word } });
    }
    send('content_block_stop', { index });
    index += 1;
  }
  for (const c of calls) {
    send('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} },
    });
    for (const part of halves(argumentsText(c.arguments))) {
      send('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: part },
      });
    }
    send('content_block_stop', { index });
    index += 1;
  }
  send('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  send('message_stop', {});
  res.end();
}
