import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { seedDemo } from '../harness/demo-data';
import { CLI_CWD, cliCommand, cliEnv, DEMO_MODELS } from './cli-process';

const PROMPT = 'parse-agent> ';

/**
 * `parse-agent console` as a person uses it: a child process fed one line at a time, each after
 * the prompt came back, against the real Parse Server with the demo's models.
 */
class ConsoleSession {
  private output = '';
  private readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  stderr = '';

  constructor(env: Record<string, string>) {
    const { command, args } = cliCommand(['--models', DEMO_MODELS, 'console']);
    this.child = spawn(command, args, { env, cwd: CLI_CWD });
    this.child.stdout.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  /** Everything printed up to the first prompt. */
  async banner(): Promise<string> {
    await this.waitFor((text) => text.includes(PROMPT));
    const at = this.output.indexOf(PROMPT);
    const banner = this.output.slice(0, at);
    this.output = this.output.slice(at + PROMPT.length);
    return banner;
  }

  /** Types one line and returns what it printed before the next prompt. */
  async line(code: string): Promise<string> {
    this.child.stdin.write(code + '\n');
    await this.waitFor((text) => text.includes(PROMPT));
    const at = this.output.indexOf(PROMPT);
    const printed = this.output.slice(0, at);
    this.output = this.output.slice(at + PROMPT.length);
    return printed.trim();
  }

  async end(): Promise<number | null> {
    this.child.stdin.end();
    return this.exited;
  }

  private async waitFor(done: (text: string) => boolean): Promise<void> {
    for (let i = 0; i < 600 && !done(this.output); i++) {
      if (this.child.exitCode !== null) {
        throw new Error(`the console exited (${this.child.exitCode}): ${this.stderr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!done(this.output)) throw new Error(`no prompt; printed so far: ${this.output}`);
  }
}

describe('parse-agent console (child process, real Parse Server)', () => {
  let tokens: { alice: string };
  beforeAll(async () => {
    tokens = await seedDemo();
  }, 60_000);

  it("alice's console counts, queries and lists only what her agent may, and awaits each line", async () => {
    const session = new ConsoleSession(
      cliEnv({ PARSE_SESSION_TOKEN: tokens.alice, PARSE_AGENT_TENANT_ID: 'acme' }),
    );
    try {
      const banner = await session.banner();
      expect(banner).toMatch(/Acting as alice \(session\) \| permissions readonly \| tenant acme/);
      expect(banner).not.toContain(tokens.alice);

      // A helper's promise is awaited: the number is printed, not "Promise { <pending> }".
      expect(await session.line("count('Order')")).toBe('1470');
      expect(await session.line("await count('Order', { status: 'void' })")).toMatch(/^\d+$/);

      const rows = await session.line(
        "q('Order', { limit: 3, keys: ['tenantId', 'status'] }).then((r) => r.data.results.map((o) => o.tenantId))",
      );
      expect(rows).toBe("[ 'acme', 'acme', 'acme' ]");

      const tools = await session.line('tools().length');
      expect(tools).toMatch(/query_class/);
      expect(tools).not.toMatch(/create_object|delete_class/);

      const schemas = await session.line('schemas()');
      expect(schemas).toMatch(/Custom: .*\bOrder\b/);
      expect(schemas).not.toMatch(/ApiCredential/);

      // A refusal comes back as the agent's envelope; the hidden class is not revealed.
      const refused = await session.line("t('query_class', { class_name: 'ApiCredential' })");
      expect(refused).toMatch(/success: false/);
      expect(refused).not.toMatch(/sk_live|whsec/);

      // Raw MCP through the same identity.
      expect(
        await session.line(
          "dispatch('tools/list').then((m) => m.result.tools.some((t) => t.name === 'create_object'))",
        ),
      ).toBe('false');
      expect(await session.line('prompts().then((p) => p.length > 0)')).toMatch(/true$/);

      // Without a model, ask() says how to configure one instead of failing obscurely.
      expect(await session.line("ask('how many orders?')")).toMatch(/LLM_PROVIDER/);

      // An error in a line is printed and the console goes on.
      expect(await session.line('nope()')).toMatch(/ReferenceError: nope is not defined/);
      expect(await session.line('1 + 1')).toBe('2');
    } finally {
      expect(await session.end()).toBe(0);
    }
  }, 90_000);

  it('lines piped in at once still run one after the other', async () => {
    const session = new ConsoleSession(
      cliEnv({ PARSE_SESSION_TOKEN: tokens.alice, PARSE_AGENT_TENANT_ID: 'acme' }),
    );
    await session.banner();
    const all = await session.line(
      "count('Order')\nq('Order', { limit: 1 }).then(() => 'second')\n'third'",
    );
    // The first line's prompt arrives after its own answer: the rest follow in order.
    expect(all).toBe('1470');
    expect(await session.line('')).toBe("'second'");
    expect(await session.line('')).toBe("'third'");
    expect(await session.end()).toBe(0);
  }, 90_000);
});
