import { readFileSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { BUILTIN_DATA_PATHS } from '../composition/data-paths';
import type { DataPathUriSetting } from '../data/data-path-descriptor';
import { CLI_ENV, CliUsageError, type DatabaseUris } from './cli-settings';

/** The longest secret line read from stdin; a session token is far shorter. */
const MAX_SECRET_BYTES = 4096;

/** The flags a session token can come in on (the environment is the other way). */
export interface SessionTokenFlags {
  /** `--session-token <token>`: works, with a warning (argv is visible to every local user). */
  sessionToken?: string;
  /** `--session-token-file <path>`: the file's first line; `-` reads it from stdin. */
  sessionTokenFile?: string;
}

export interface SecretSourceContext {
  stdin: Readable & { isTTY?: boolean };
  /** Why this command cannot spare stdin (it reads a conversation or JSON-RPC), if it cannot. */
  stdinBusy?: string;
  warn: (line: string) => void;
}

export const SESSION_TOKEN_ON_ARGV_WARNING = `parse-agent: warning: --session-token puts the token on the command line, where other local users can read it (ps, /proc) and shell history keeps it. Pass it in ${CLI_ENV.sessionToken} (or a .env file), or with --session-token-file <path> ('-' reads it from stdin).`;

/** The warning for a connection string given on argv (its URI usually carries the password). */
export function databaseUriOnArgvWarning(path: { uri: DataPathUriSetting }): string {
  return `parse-agent: warning: ${path.uri.flag} puts the connection string (and its password) on the command line, where other local users can read it (ps, /proc) and shell history keeps it. Set ${path.uri.env} in the environment or a .env file (--env-file <path>) instead.`;
}

/** Warns once per database URI given on argv; the value itself is never printed. */
export function warnDatabaseUrisOnArgv(uris: DatabaseUris, warn: (line: string) => void): void {
  for (const path of BUILTIN_DATA_PATHS) {
    if (uris[path.kind] !== undefined) warn(databaseUriOnArgvWarning(path));
  }
}

/**
 * The session token given by flag, or undefined to fall back on the environment. A token on
 * argv still works but draws a warning; a file or stdin keeps it out of the process list. No
 * message ever includes the token.
 */
export async function sessionTokenFromFlags(
  flags: SessionTokenFlags,
  context: SecretSourceContext,
): Promise<string | undefined> {
  if (flags.sessionToken !== undefined && flags.sessionTokenFile !== undefined) {
    throw new CliUsageError(
      'Pass the session token one way: --session-token-file (or the environment), not also --session-token.',
    );
  }
  if (flags.sessionToken !== undefined) {
    context.warn(SESSION_TOKEN_ON_ARGV_WARNING);
    // Blank would mean "no token": the master key, not the user the caller meant.
    if (!flags.sessionToken.trim()) throw new CliUsageError('--session-token is empty.');
    return flags.sessionToken;
  }
  const path = flags.sessionTokenFile;
  if (path === undefined) return undefined;
  if (path === '-') return readSecretFromStdin(context);
  return readSecretFile(path, context.warn);
}

function firstLine(text: string): string {
  return (text.split(/\r?\n/, 1)[0] ?? '').trim();
}

function readSecretFile(path: string, warn: (line: string) => void): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliUsageError(
      `--session-token-file ${path}: ${code === 'ENOENT' ? 'no such file' : `cannot be read (${code ?? 'error'})`}.`,
    );
  }
  const token = firstLine(text);
  if (!token)
    throw new CliUsageError(`--session-token-file ${path}: the file's first line is empty.`);
  try {
    const mode = statSync(path).mode;
    if (process.platform !== 'win32' && mode & 0o077) {
      warn(
        `parse-agent: warning: ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}); chmod 600 it.`,
      );
    }
  } catch {
    // Read a moment ago; a file gone since then changes nothing about the token we hold.
  }
  return token;
}

/** The first line of stdin (up to a newline or the end). */
async function readSecretFromStdin(context: SecretSourceContext): Promise<string> {
  if (context.stdinBusy) {
    throw new CliUsageError(
      `--session-token-file - cannot read stdin here: ${context.stdinBusy}. Use ${CLI_ENV.sessionToken} or --session-token-file <path>.`,
    );
  }
  const { stdin } = context;
  if (stdin.isTTY) {
    throw new CliUsageError(
      `--session-token-file - reads the token from a pipe (e.g. \`pass show parse/token | parse-agent ...\`), not from a terminal, where it would show on screen. Use ${CLI_ENV.sessionToken} or --session-token-file <path>.`,
    );
  }
  const text = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onError);
      stdin.pause();
      if (error) reject(error);
      else resolve(buffered);
    };
    const onData = (chunk: Buffer | string) => {
      buffered += chunk.toString();
      if (buffered.includes('\n')) finish();
      else if (Buffer.byteLength(buffered) > MAX_SECRET_BYTES)
        finish(
          new CliUsageError(
            `--session-token-file -: no line break in the first ${MAX_SECRET_BYTES} bytes of stdin; send the token on one line.`,
          ),
        );
    };
    const onEnd = () => finish();
    const onError = (error: Error) =>
      finish(
        new CliUsageError(`--session-token-file -: stdin could not be read (${error.message}).`),
      );
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onError);
    stdin.resume();
  });
  const token = firstLine(text);
  if (!token) throw new CliUsageError('--session-token-file -: stdin held no token.');
  return token;
}
