import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { sessionTokenFromFlags, SESSION_TOKEN_ON_ARGV_WARNING } from './cli-secrets';
import { CliUsageError } from './cli-settings';

describe('sessionTokenFromFlags', () => {
  const warnings: string[] = [];
  const context = (stdin = new PassThrough(), stdinBusy?: string) => ({
    stdin,
    stdinBusy,
    warn: (line: string) => warnings.push(line),
  });
  beforeEach(() => (warnings.length = 0));

  it('leaves the environment in charge when no flag names a token', async () => {
    await expect(sessionTokenFromFlags({}, context())).resolves.toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('accepts a token on argv with a warning that never contains it', async () => {
    await expect(sessionTokenFromFlags({ sessionToken: 'r:argv' }, context())).resolves.toBe(
      'r:argv',
    );
    expect(warnings).toEqual([SESSION_TOKEN_ON_ARGV_WARNING]);
    expect(warnings.join('')).not.toContain('r:argv');
  });

  it('reads the first line of a file', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cli-secrets-')), 'token');
    writeFileSync(file, '  r:file  \r\nignored\n', { mode: 0o600 });
    await expect(sessionTokenFromFlags({ sessionTokenFile: file }, context())).resolves.toBe(
      'r:file',
    );
    writeFileSync(file, '\n');
    await expect(sessionTokenFromFlags({ sessionTokenFile: file }, context())).rejects.toThrow(
      /first line is empty/,
    );
  });

  it('reads the first line of stdin, or the whole of it without a line break', async () => {
    const piped = new PassThrough();
    const token = sessionTokenFromFlags({ sessionTokenFile: '-' }, context(piped));
    piped.write('r:pi');
    piped.write('ped\nrest of the input');
    await expect(token).resolves.toBe('r:piped');

    const ended = new PassThrough();
    const whole = sessionTokenFromFlags({ sessionTokenFile: '-' }, context(ended));
    ended.end('r:ended');
    await expect(whole).resolves.toBe('r:ended');
  });

  it('refuses stdin when the command needs it, from a terminal, or without a line', async () => {
    await expect(
      sessionTokenFromFlags({ sessionTokenFile: '-' }, context(new PassThrough(), 'chat reads it')),
    ).rejects.toThrow(/cannot read stdin here: chat reads it/);
    const terminal = Object.assign(new PassThrough(), { isTTY: true });
    await expect(
      sessionTokenFromFlags({ sessionTokenFile: '-' }, context(terminal)),
    ).rejects.toThrow(/not from a terminal/);
    const flood = new PassThrough();
    const long = sessionTokenFromFlags({ sessionTokenFile: '-' }, context(flood));
    flood.write('x'.repeat(5000));
    await expect(long).rejects.toThrow(/no line break in the first 4096 bytes/);
    const empty = new PassThrough();
    const nothing = sessionTokenFromFlags({ sessionTokenFile: '-' }, context(empty));
    empty.end();
    await expect(nothing).rejects.toThrow(/stdin held no token/);
  });

  it('refuses an empty token flag instead of falling back to the master key', async () => {
    await expect(sessionTokenFromFlags({ sessionToken: ' ' }, context())).rejects.toThrow(
      /--session-token is empty/,
    );
  });

  it('refuses two sources at once', async () => {
    await expect(
      sessionTokenFromFlags({ sessionToken: 'r:a', sessionTokenFile: '-' }, context()),
    ).rejects.toThrow(CliUsageError);
  });
});
