import type { ServerResponse } from 'node:http';
import {
  argumentsText,
  halves,
  startLoopbackLlmServer,
  type LoopbackLlmServer,
  type ReplyScript,
  type ScriptedReply,
} from './loopback-llm-server';

/** A loopback server speaking the OpenAI Chat Completions HTTP API (JSON and SSE streaming). */
export function startOpenAiLoopback(
  script: ReplyScript | ScriptedReply[],
): Promise<LoopbackLlmServer> {
  return startLoopbackLlmServer('/chat/completions', '/v1', script, answer);
}

function answer(reply: ScriptedReply, body: Record<string, unknown>, res: ServerResponse): void {
  const model = String(body.model);
  const created = Math.floor(Date.now() / 1000);
  const usage = reply.usage ?? { input: 10, output: 5 };
  const toolCalls = (reply.toolCalls ?? []).map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: argumentsText(c.arguments) },
  }));
  const finish = toolCalls.length ? 'tool_calls' : 'stop';
  const usageBody = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-loopback',
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: reply.text ?? null,
              ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
            },
            finish_reason: finish,
            logprobs: null,
          },
        ],
        usage: usageBody,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({
        id: 'chatcmpl-loopback',
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
      })}\n\n`,
    );
  chunk({ role: 'assistant', content: '' });
  for (const word of (reply.text ?? '').split(/(?<= )/).filter(Boolean)) chunk({ content: word });
  toolCalls.forEach((call, index) => {
    const [first, ...rest] = halves(call.function.arguments);
    chunk({
      tool_calls: [
        {
          index,
          id: call.id,
          type: 'function',
          function: { name: call.function.name, arguments: first ?? '' },
        },
      ],
    });
    for (const part of rest) chunk({ tool_calls: [{ index, function: { arguments: part } }] });
  });
  chunk({}, finish);
  const wantsUsage = (body.stream_options as { include_usage?: boolean } | undefined)
    ?.include_usage;
  if (wantsUsage) {
    res.write(
      `data: ${JSON.stringify({ id: 'chatcmpl-loopback', object: 'chat.completion.chunk', created, model, choices: [], usage: usageBody })}\n\n`,
    );
  }
  res.end('data: [DONE]\n\n');
}
