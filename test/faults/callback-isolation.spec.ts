import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Application code that throws from a subscriber or a callback of the library must not end the
 * process, fail a call or hang: each scenario runs in a process of its own
 * (callback-isolation-child.ts), where the failure mode is the process dying (rxjs rethrows a
 * subscriber's error asynchronously, and Nest exits on a module that fails to start).
 */
interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

const root = join(__dirname, '..', '..');

function runChild(args: string[], timeoutMs = 30_000): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '-r',
        join(root, 'test/harness/ts-register.js'),
        join(__dirname, 'callback-isolation-child.ts'),
        ...args,
      ],
      { cwd: root, env: { ...process.env, TESTING: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

/** The outcome the child printed, once it is known the process lived and ended by itself. */
function survived(outcome: ChildOutcome): unknown {
  const context = `exit ${outcome.code} ${outcome.signal ?? ''}\nstdout: ${outcome.stdout}\nstderr: ${outcome.stderr.slice(-2000)}`;
  expect({ timedOut: outcome.timedOut, code: outcome.code, context }).toEqual({
    timedOut: false,
    code: 0,
    context,
  });
  const line = outcome.stdout.split('\n').find((l) => l.startsWith('SURVIVED '));
  expect(line).toBeDefined();
  return JSON.parse(line!.slice('SURVIVED '.length));
}

describe('callbacks and subscribers of the library cannot take the process down', () => {
  it('a throwing ToolRegistry.changes$ subscriber (direct and piped) is reported; registration goes on', async () => {
    const outcome = await runChild(['tool-changes']);
    expect(survived(outcome)).toEqual({ registered: true, stillListed: false });
    expect(outcome.stderr).toMatch(
      /a subscriber of ToolRegistry\.changes\$ threw in next \(ignored\)/,
    );
    expect(outcome.stderr).toMatch(/application subscriber failed in piped changes\$/);
  });

  it('a throwing PromptRegistry.changes$ subscriber is reported', async () => {
    const outcome = await runChild(['prompt-changes']);
    expect(survived(outcome)).toEqual({ registered: true });
    expect(outcome.stderr).toMatch(/PromptRegistry\.changes\$ threw in next \(ignored\)/);
  });

  it('throwing toolCalls$, securityEvents$ and mutations$ subscribers fail no call', async () => {
    const outcome = await runChild(['agent-events']);
    expect(survived(outcome)).toEqual({ listed: true, denied: 'permission_denied' });
    for (const stream of ['toolCalls', 'securityEvents', 'mutations']) {
      expect(outcome.stderr).toMatch(new RegExp(`AgentEvents\\.${stream}\\$ threw in next`));
    }
  });

  it('a throwing onProgress callback and progress$ subscriber do not fail the tool call', async () => {
    const outcome = await runChild(['on-progress']);
    expect(survived(outcome)).toEqual({ success: true, data: { done: true } });
    expect(outcome.stderr).toMatch(/an onProgress callback threw \(ignored\)/);
    expect(outcome.stderr).toMatch(/agent\.progress\$ threw in next/);
  });

  it('a conversation stream whose question fails, subscribed without an error handler, is reported', async () => {
    const outcome = await runChild(['conversation-stream']);
    expect(survived(outcome)).toEqual({ events: [] });
    expect(outcome.stderr).toMatch(
      /conversation\.stream\(\) ended with an error no subscriber handled/,
    );
  });

  it('startStandaloneMcpServer with a bad option rejects its promise and leaves nothing running', async () => {
    // One process for every case: a start that ends the process, or leaves a server running (the
    // process then never exits), fails them all.
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ parse: {} }, /parse\.serverURL is required/],
      [{ port: 'abc' }, /port must be a whole number from 0 to 65535/],
      [{ port: 80.5 }, /port must be a whole number/],
      [{ host: '' }, /host must be an interface address/],
      [{ permissions: 'root' }, /permissions must be readonly, write or admin/],
      [{ mcp: { maxBodyBytes: -1 } }, /maxBodyBytes must be a positive number/],
    ];
    const outcome = await runChild([
      'standalone',
      JSON.stringify(cases.map(([options]) => options)),
    ]);
    const results = survived(outcome) as Array<{ rejected?: string; message?: string }>;
    expect(results).toHaveLength(cases.length);
    results.forEach((result, i) => {
      expect({ options: cases[i][0], rejected: result.rejected }).toEqual({
        options: cases[i][0],
        rejected: 'ParseAgentConfigError',
      });
      expect(result.message).toMatch(cases[i][1]);
    });
  });
});
