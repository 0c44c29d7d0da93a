import type { LoopbackLlmServer } from '../client/loopback-llm-server';
import { startOpenAiLoopback } from '../client/loopback-openai-server';
import { createObject } from '../harness/fixtures';
import { join } from 'node:path';
import { cliEnv, runCliProcess, runCliWithInput, type CliRun } from './cli-process';

const CLASS = 'TerminalProbe';
const MODELS = ['--models', join(__dirname, 'terminal-probe.models.ts')];

/**
 * What stored text may try on an operator's terminal. No NUL: PostgreSQL text cannot hold one,
 * so Parse Server cannot store it (the unit spec of terminalSafe covers U+0000).
 */
const PAYLOADS = {
  clipboard: 'copy\x1b]52;c;cHduZWQ=\x07me', // OSC 52: writes the clipboard
  clear: '\x1b[2J\x1b[Hscreen cleared', // CSI: clear screen, cursor home
  title: '\x1b]0;owned\x07', // OSC 0: window title
  c1: 'c1 \u009b31m red', // the one-byte CSI
  controls: 'bell\x07 back\x08 del\x7f cr\rover',
  bidi: 'invoice\u202efdp.exe \u2066iso\u2069 \u202aemb\u202c',
  invisible: 'zw\u200bs\u200cn\u200dj\ufeffbom\u2060wj',
  tags: 'tag\u{e0041}\u{e0042}',
};
const ALL = Object.values(PAYLOADS).join(' | ');

/** Hidden characters that must never appear raw (newline and tab are the CLI's own layout). */
const RAW =
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/u;

function expectNoRawControls(run: CliRun): void {
  for (const [stream, text] of [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
  ] as const) {
    const found = RAW.exec(text);
    if (found) {
      const at = found.index;
      throw new Error(
        `${stream} carries U+${found[0].codePointAt(0)!.toString(16).padStart(4, '0')} raw near ${JSON.stringify(text.slice(Math.max(0, at - 30), at + 30))}`,
      );
    }
  }
}

/**
 * The CLI as a child process on the real Parse Server, reading rows whose text holds escape
 * sequences, bidi overrides and invisible characters: every printing path (call's JSON and
 * --table, the console's values, tables, console.log and errors, chat's answers, tool traces,
 * history and provider errors) shows them as escapes, never raw.
 */
describe('parse-agent prints stored text as escapes, never raw (child process, real Parse Server)', () => {
  beforeAll(async () => {
    await createObject(CLASS, { label: 'all', text: ALL, ...PAYLOADS });
  }, 60_000);

  it('call: the JSON is valid, holds the stored text exactly, and no control reaches the terminal', async () => {
    const run = await runCliProcess([
      ...MODELS,
      'call',
      'query_class',
      `{"class_name":"${CLASS}"}`,
    ]);
    expect(run.code).toBe(0);
    expectNoRawControls(run);
    const row = JSON.parse(run.stdout).data.results[0];
    expect(row).toMatchObject({ text: ALL, ...PAYLOADS });
  }, 60_000);

  it('call --table: cells show the escapes', async () => {
    const run = await runCliProcess([
      ...MODELS,
      'call',
      'query_class',
      `{"class_name":"${CLASS}","keys":["clipboard","bidi","tags"]}`,
      '--table',
    ]);
    expect(run.code).toBe(0);
    expectNoRawControls(run);
    expect(run.stdout).toContain('copy\\x1b]52;c;cHduZWQ=\\x07me');
    expect(run.stdout).toContain('invoice\\u202efdp.exe');
    expect(run.stdout).toContain('tag\\u{e0041}\\u{e0042}');
  }, 60_000);

  it('console: values, table(), console.log() and errors print escapes', async () => {
    const script = [
      `table(await q('${CLASS}'))`,
      `q('${CLASS}')`,
      `console.log((await q('${CLASS}')).data.results[0].text)`,
      `q('${CLASS}').then((r) => { throw new Error(r.data.results[0].clear) })`,
      `count('${CLASS}')`,
    ].join('\n');
    const run = await runCliWithInput([...MODELS, 'console'], cliEnv(), script + '\n');
    expect(run.code).toBe(0);
    expectNoRawControls(run);
    expect(run.stdout).toContain('\\x1b[2J\\x1b[Hscreen cleared');
    expect(run.stdout).toContain('c1 \\x9b31m red');
    expect(run.stdout).toMatch(/^parse-agent> 1$/m); // the last line ran: the console went on
  }, 60_000);

  describe('chat (model: loopback server speaking the OpenAI HTTP API)', () => {
    let llm: LoopbackLlmServer;
    const providerText = `upstream said: ${PAYLOADS.clear} ${'x'.repeat(2000)}`;

    beforeAll(async () => {
      llm = await startOpenAiLoopback([
        {
          toolCalls: [
            { id: 'c1', name: 'query_class', arguments: { class_name: CLASS, limit: 1 } },
          ],
        },
        {
          toolCalls: [
            {
              id: 'c2',
              name: 'query_class',
              arguments: { class_name: `Nope${PAYLOADS.title}`, where: { a: PAYLOADS.bidi } },
            },
          ],
        },
        { text: `Found it: ${PAYLOADS.clipboard} and ${PAYLOADS.invisible}` },
        // 400: the SDK does not retry it, so the next question meets exactly this.
        { status: 400, text: providerText },
      ]);
    });
    afterAll(() => llm?.close());

    it('answers, tool traces, failures, history and provider errors print escapes; provider text is capped', async () => {
      const run = await runCliWithInput(
        [...MODELS, 'chat', '--trace'],
        cliEnv({
          LLM_PROVIDER: 'openai',
          LLM_API_KEY: 'sk-loopback',
          LLM_MODEL: 'gpt-4o-mini',
          LLM_BASE_URL: llm.baseURL,
        }),
        'What is stored?\nAnd now?\n/history\n/quit\n',
      );
      expect(run.code).toBe(0);
      expectNoRawControls(run);
      // The model's answer, the trace of the failed call (arguments and refusal), then the error.
      expect(run.stdout).toContain('Found it: copy\\x1b]52;c;cHduZWQ=\\x07me');
      expect(run.stdout).toContain('Nope\\x1b]0;owned\\x07');
      const errorLine = run.stdout.split('\n').find((line) => /^(> )*error: /.test(line));
      expect(errorLine).toContain('upstream said: \\x1b[2J\\x1b[H');
      expect(errorLine).toMatch(/… \[\d+ more characters of the provider's text cut\]$/);
      expect(errorLine!.length).toBeLessThan(700);
    }, 60_000);
  });
});
