import type { Command } from 'commander';
import type { Readable, Writable } from 'node:stream';
import type { DatabaseSetting } from '../composition/data-paths';
import type { PermissionLevel } from '../core/constants';
import type { ModelClass } from '../metadata/metadata.types';
import type { CliSession } from './cli-session';
import type { CliSettings } from './cli-settings';

/** What `parse-agent serve` asks the HTTP server host for (see the bin entry in nest/). */
export interface CliServeRequest {
  parse: CliSettings['parse'];
  host: string;
  port: number;
  permissions: PermissionLevel;
  sessionToken?: string;
  tenantId?: string;
  models: ModelClass[];
  /** Classes no model declares (`--expose-unregistered`: 'visible'). */
  unregisteredClasses?: 'hidden' | 'visible';
  /** The direct database path (a path's connection string, e.g. POSTGRES_URI), when set. */
  database?: DatabaseSetting;
  /** How the server logs: readable lines (`pretty`) or JSON lines (`json`, for collectors). */
  logFormat?: 'json' | 'pretty';
  /** Streaming tool calls in flight at once (`--max-concurrent-streams`; default the module's). */
  maxConcurrentStreams?: number;
}

export interface CliServer {
  url: string;
  close(): Promise<void>;
}

export interface CliDependencies {
  /**
   * Starts the standalone HTTP MCP server. The server is a Nest application and the CLI sits below
   * the Nest layer, so the bin entry hands this in.
   */
  startServer?: (request: CliServeRequest) => Promise<CliServer>;
  stdin?: Readable;
  stdout?: Writable & { isTTY?: boolean };
  stderr?: Writable;
  env?: Record<string, string | undefined>;
}

/** The exit codes: 0 done, 1 a tool or request failed, 2 a setting or argument must be fixed. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** What every command runs with: the streams, the settings and a session for the identity. */
export interface CliContext {
  readonly deps: CliDependencies;
  readonly stdin: Readable;
  readonly stdout: Writable & { isTTY?: boolean };
  readonly env: Record<string, string | undefined>;
  /** A line on stderr (made terminal-safe). */
  log(line: string): void;
  /** Text on stdout (made terminal-safe). */
  print(text: string): void;
  /** A value as JSON on stdout (made terminal-safe). */
  printJson(value: unknown): void;
  /**
   * The settings of the command's invocation (flags, environment, .env). `stdinBusy`: why the
   * command needs stdin for itself (a token cannot come in on it).
   */
  settingsOf(command: Command, stdinBusy?: string): Promise<CliSettings>;
  /** Runs `run` with a session for the identity the settings name, closed afterwards. */
  withSession(
    from: Command | CliSettings,
    run: (session: CliSession) => Promise<void>,
    stdinBusy?: string,
  ): Promise<void>;
  /** The code the CLI exits with when the command returns normally. */
  setExitCode(code: number): void;
}

/** One `parse-agent` command: adds itself (flags, help, action) to the program. */
export type CliCommand = (program: Command, cli: CliContext) => void;
