import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PARSE_CONVENTIONS } from 'nestjs-parse-agent/mcp/parse-conventions';
import type { LoopbackLlmServer } from '../client/loopback-llm-server';
import { startOpenAiLoopback } from '../client/loopback-openai-server';
import { seedDemo } from '../harness/demo-data';
import { parseRest } from '../harness/parse-rest';
import { CLI_CWD, cliEnv, DEMO_MODELS, runCliWithInput } from './cli-process';

type Msg = { role: string; content?: string | null };

/**
 * `parse-agent chat` as a child process against the real Parse Server: what the model receives as
 * its system prompt, and what /system prints. The model is a loopback server speaking the OpenAI
 * HTTP API that answers every question with one line.
 */
describe('parse-agent chat system prompt (child process; model: loopback server speaking the OpenAI HTTP API)', () => {
  let llm: LoopbackLlmServer;
  let tokens: { alice: string };
  let aliceId: string;
  const models = ['--models', DEMO_MODELS];

  beforeAll(async () => {
    tokens = await seedDemo();
    aliceId = (
      await parseRest<{ objectId: string }>('GET', '/users/me', undefined, {
        sessionToken: tokens.alice,
      })
    ).objectId;
    llm = await startOpenAiLoopback(() => ({ text: 'Noted.' }));
  }, 60_000);
  afterAll(() => llm?.close());

  const chatEnv = (extra: Record<string, string> = {}) =>
    cliEnv({
      PARSE_SESSION_TOKEN: tokens.alice,
      PARSE_AGENT_TENANT_ID: 'acme',
      LLM_PROVIDER: 'openai',
      LLM_API_KEY: 'sk-loopback',
      LLM_MODEL: 'gpt-4o-mini',
      LLM_BASE_URL: llm.baseURL,
      ...extra,
    });

  const systemOf = (index: number): string => {
    const messages = llm.requests[index].body.messages as Msg[];
    expect(messages[0].role).toBe('system');
    return String(messages[0].content);
  };

  it('sends the default prompt naming the verified user and tenant, with LLM_SYSTEM_PROMPT_SUFFIX, and /system prints it', async () => {
    const before = llm.requests.length;
    const run = await runCliWithInput(
      [...models, 'chat'],
      chatEnv({ LLM_SYSTEM_PROMPT_SUFFIX: 'House rule: answer in one line.' }),
      'Hi\n/system\n/quit\n',
    );
    expect(run.code).toBe(0);
    expect(llm.requests.length).toBe(before + 1);
    const prompt = systemOf(before);
    expect(prompt).toContain(
      `You act for the Parse user "alice" (objectId "${aliceId}"), through their own session.`,
    );
    expect(prompt).toContain('Tenant: "acme".');
    expect(prompt).toContain(PARSE_CONVENTIONS);
    expect(prompt.endsWith('\n\nHouse rule: answer in one line.')).toBe(true);
    expect(prompt).not.toContain(tokens.alice);
    // /system shows the same text the model received; the token appears nowhere in the output.
    expect(run.stdout).toContain(prompt);
    expect(run.stdout + run.stderr).not.toContain(tokens.alice);
  }, 60_000);

  it('replaces the default with --system-file, and --system-suffix wins over the environment', async () => {
    const file = join(CLI_CWD, 'desk-prompt.txt');
    writeFileSync(file, 'You are the Acme data desk.\n');
    const before = llm.requests.length;
    const run = await runCliWithInput(
      [...models, 'chat', '--system-file', file, '--system-suffix', 'Be brief.'],
      chatEnv({ LLM_SYSTEM_PROMPT: 'ignored: the file wins', LLM_SYSTEM_PROMPT_SUFFIX: 'ignored' }),
      'Hi\n/quit\n',
    );
    expect(run.code).toBe(0);
    expect(systemOf(before)).toBe('You are the Acme data desk.\n\nBe brief.');
  }, 60_000);

  it('refuses --system with --system-file before asking the model anything (exit 2)', async () => {
    const before = llm.requests.length;
    const run = await runCliWithInput(
      [...models, 'chat', '--system', 'a', '--system-file', 'b'],
      chatEnv(),
      'Hi\n/quit\n',
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Give --system or --system-file, not both');
    expect(llm.requests.length).toBe(before);
  }, 60_000);
});
