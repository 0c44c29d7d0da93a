import { Writable } from 'node:stream';
import { suppressSecurityBanners } from 'nestjs-parse-agent/ops';
import { runCli, type CliServeRequest } from 'nestjs-parse-agent/cli/parse-agent-cli';
import { cliEnv } from './cli-process';

/** Collects what the CLI writes. */
class Sink extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

/**
 * `parse-agent serve --max-concurrent-streams`, run in process with the server start recorded (the
 * bin entry hands `startServer` in; here it records the request instead of listening).
 */
describe('parse-agent serve --max-concurrent-streams (real Parse Server)', () => {
  beforeAll(() => suppressSecurityBanners());
  const serve = async (args: string[]) => {
    const requests: CliServeRequest[] = [];
    const stderr = new Sink();
    const before = new Set(process.listeners('SIGTERM'));
    const exit = runCli(['serve', '--port', '0', ...args], {
      env: cliEnv(),
      stdout: new Sink(),
      stderr,
      startServer: async (request) => {
        requests.push(request);
        return { url: 'http://127.0.0.1:1', close: async () => undefined };
      },
    });
    // Once the server "listens", serve waits for a signal: deliver it to serve's handler only.
    for (let i = 0; i < 200 && !requests.length; i++) {
      if (await Promise.race([exit.then(() => true), new Promise((r) => setTimeout(r, 25))])) break;
    }
    for (const listener of process.listeners('SIGTERM')) {
      if (!before.has(listener)) {
        process.off('SIGTERM', listener);
        (listener as () => void)();
      }
    }
    for (const listener of process.listeners('SIGINT')) {
      if (!before.has(listener)) process.off('SIGINT', listener);
    }
    return { code: await exit, requests, stderr: stderr.text };
  };

  it('hands the cap to the server', async () => {
    const run = await serve(['--max-concurrent-streams', '25']);
    expect(run.code).toBe(0);
    expect(run.requests).toEqual([expect.objectContaining({ maxConcurrentStreams: 25 })]);
  });

  it('without the flag leaves the module default in force', async () => {
    const run = await serve([]);
    expect(run.requests[0].maxConcurrentStreams).toBeUndefined();
  });

  it('refuses a cap that is not a positive integer (exit 2), before starting anything', async () => {
    for (const bad of ['0', '-3', '2.5', 'many']) {
      const run = await serve(['--max-concurrent-streams', bad]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `--max-concurrent-streams must be a positive integer, got "${bad}".`,
      );
      expect(run.requests).toEqual([]);
    }
  });
});
