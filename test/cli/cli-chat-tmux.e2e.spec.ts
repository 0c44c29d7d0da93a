import { unwrapUntrusted } from 'nestjs-parse-agent/core/untrusted-data';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LoopbackLlmServer, ScriptedReply } from '../client/loopback-llm-server';
import { startOpenAiLoopback } from '../client/loopback-openai-server';
import { seedDemo } from '../harness/demo-data';
import { CLI_CWD, cliCommand, cliEnv, DEMO_MODELS } from './cli-process';

type Msg = { role: string; content?: string | null };

const HAVE_TMUX = spawnSync('tmux', ['-V']).status === 0;
if (!HAVE_TMUX) {
  // Visible in the run's output: CI installs tmux (.ci/run), a bare machine may not have it.
  process.stderr.write(
    'cli-chat-tmux: tmux is not on PATH, so the terminal chat test is SKIPPED\n',
  );
}

/**
 * The scripted model: asks count_objects for the class the question names, then reports the count
 * the tool returned; writes a summary when asked to compact; fails with 400 on "fail".
 */
function model(body: Record<string, unknown>): ScriptedReply {
  const messages = body.messages as Msg[];
  const system = messages.find((m) => m.role === 'system');
  if (/condense a conversation/.test(String(system?.content ?? ''))) {
    return { text: 'SUMMARY: the user counted orders.', usage: { input: 300, output: 30 } };
  }
  const lastUser = [...messages].reverse().find((m) => m.role === 'user')!;
  if (/fail/i.test(String(lastUser.content))) return { status: 400, text: 'scripted refusal' };
  const cls = /customer/i.test(String(lastUser.content)) ? 'Customer' : 'Order';
  const tool = messages.slice(messages.lastIndexOf(lastUser)).find((m) => m.role === 'tool');
  if (!tool) {
    return {
      toolCalls: [{ id: `call_${cls}`, name: 'count_objects', arguments: { class_name: cls } }],
      usage: { input: 100, output: 10 },
    };
  }
  const envelope = JSON.parse(unwrapUntrusted(String(tool.content))) as { data: { count: number } };
  return {
    text: `There are ${envelope.data.count} ${cls} rows.`,
    usage: { input: 200, output: 20 },
  };
}

(HAVE_TMUX ? describe : describe.skip)(
  'parse-agent chat in a terminal (tmux; model: loopback server speaking the OpenAI HTTP API)',
  () => {
    const socket = `parse-agent-test-${process.pid}`;
    const tmux = (...args: string[]) =>
      execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    let llm: LoopbackLlmServer;

    beforeAll(async () => {
      const tokens = await seedDemo();
      llm = await startOpenAiLoopback(model);
      const { command, args } = cliCommand(['--models', DEMO_MODELS, 'chat']);
      const env = cliEnv({
        PARSE_SESSION_TOKEN: tokens.alice,
        PARSE_AGENT_TENANT_ID: 'acme',
        LLM_PROVIDER: 'openai',
        LLM_API_KEY: 'sk-loopback',
        LLM_MODEL: 'gpt-4o-mini',
        LLM_BASE_URL: llm.baseURL,
        TERM: 'xterm',
      });
      // A launcher script carries the environment into the tmux pane.
      const script = join(CLI_CWD, 'chat.sh');
      const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
      writeFileSync(
        script,
        [
          '#!/bin/sh',
          ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`),
          `cd ${quote(CLI_CWD)}`,
          `${[command, ...args].map(quote).join(' ')}`,
          'echo "[exit $?]"',
          'sleep 30',
        ].join('\n'),
      );
      chmodSync(script, 0o755);
      tmux('new-session', '-d', '-s', 'chat', '-x', '160', '-y', '50', script);
    }, 60_000);

    afterAll(async () => {
      spawnSync('tmux', ['-L', socket, 'kill-server']);
      await llm?.close();
    });

    const screen = () => tmux('capture-pane', '-p', '-t', 'chat', '-S', '-500');
    async function waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const text = screen();
        if (pattern.test(text)) return text;
        if (Date.now() > deadline) {
          throw new Error(`timed out waiting for ${pattern}; the pane shows:\n${text}`);
        }
        await new Promise((r) => setTimeout(r, 150));
      }
    }
    const type = (line: string) => tmux('send-keys', '-t', 'chat', '-l', line);
    const enter = () => tmux('send-keys', '-t', 'chat', 'Enter');
    const say = (line: string) => {
      type(line);
      enter();
    };

    it('holds a conversation with slash commands, tool progress and readable errors', async () => {
      const header = await waitFor(/Ask a question/);
      expect(header).toMatch(/parse-agent chat — openai \/ gpt-4o-mini/);
      expect(header).toMatch(/Acting as alice \(session\) \| permissions readonly \| tenant acme/);

      say('/tools');
      await waitFor(/query_class/);
      expect(screen()).not.toMatch(/create_object/);

      // The answer carries the real count of alice's tenant, obtained through the tool.
      say('How many orders are there?');
      await waitFor(/There are 1470 Order rows\./);

      say('/trace');
      await waitFor(/Trace on\./);
      say('And how many customers?');
      const traced = await waitFor(/There are \d+ Customer rows\./);
      expect(traced).toMatch(/… running count_objects \{"class_name":"Customer"\}/);
      expect(traced).toMatch(/count_objects ok \(\d+ ms\)/);
      expect(traced).toMatch(/\[\d+ in \+ \d+ out = \d+ tokens \$\d/);
      // The follow-up went out with the earlier turns: one conversation, not two.
      const followUp = llm.requests[llm.requests.length - 2].body.messages as Msg[];
      expect(followUp.filter((m) => m.role === 'user')).toHaveLength(2);

      say('/usage');
      const usage = await waitFor(/session: 600 in \+ 60 out = 660 tokens \$/);
      expect(usage).toMatch(/last: +300 in \+ 30 out = 330 tokens/);

      say('/compact');
      await waitFor(/Compacted \d+ messages into a summary \(330 tokens spent\):/);
      await waitFor(/SUMMARY: the user counted orders\./);

      say('please fail now');
      await waitFor(/error: openai request failed: .*400/);

      say('/nope');
      await waitFor(/Unknown command \/nope\. Commands: \/tools/);

      say('/reset');
      await waitFor(/History cleared\./);
      say('/history');
      await waitFor(/History cleared\.\s*\n> \/history\s*\n\(empty\)/);

      say('/quit');
      await waitFor(/bye\s*\n\[exit 0\]/);
    }, 90_000);
  },
);
