import { ParseAgentConfigError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';

/**
 * What the module does when a setting is found wrong at start-up: `'fail'` (the default) fails the
 * boot, `'warn'` logs and starts anyway, `'off'` checks nothing.
 */
export type StartupCheckMode = 'fail' | 'warn' | 'off';

export interface StartupCheckOptions {
  mode?: StartupCheckMode;
  /** Time limit of one probe: one request to Parse Server, one query per database (default 5 000 ms). */
  timeoutMs?: number;
  /**
   * How long a Parse Server that cannot be reached yet is waited for, in the background, before the
   * check reports it (default 30 000 ms). Boot does not wait for it: an app that mounts Parse Server
   * itself only serves it once it listens, after the module has booted.
   */
  parseWaitMs?: number;
}

export type ResolvedStartupCheck = Required<StartupCheckOptions>;

export const DEFAULT_STARTUP_CHECK: ResolvedStartupCheck = Object.freeze({
  mode: 'fail',
  timeoutMs: 5_000,
  parseWaitMs: 30_000,
});

const MODES: readonly StartupCheckMode[] = ['fail', 'warn', 'off'];

/** The `startupCheck` option with its defaults; throws a ParseAgentConfigError naming the field. */
export function resolveStartupCheck(
  value: StartupCheckMode | StartupCheckOptions | undefined,
): ResolvedStartupCheck {
  const fail = (problem: string): never => {
    throw new ParseAgentConfigError(`ParseAgentModule.forRoot: ${problem}`);
  };
  if (value === undefined) return DEFAULT_STARTUP_CHECK;
  const options: StartupCheckOptions = typeof value === 'string' ? { mode: value } : value;
  if (!isPlainObject(options as unknown)) {
    return fail(
      `startupCheck must be 'fail', 'warn', 'off' or { mode, timeoutMs, parseWaitMs } (got ${JSON.stringify(value)}).`,
    );
  }
  const mode = options.mode ?? DEFAULT_STARTUP_CHECK.mode;
  if (!MODES.includes(mode)) {
    fail(`startupCheck mode must be 'fail', 'warn' or 'off' (got ${JSON.stringify(mode)}).`);
  }
  for (const key of ['timeoutMs', 'parseWaitMs'] as const) {
    const ms = options[key];
    if (ms !== undefined && !(typeof ms === 'number' && Number.isFinite(ms) && ms > 0)) {
      fail(`startupCheck.${key} must be a positive number of milliseconds.`);
    }
  }
  return {
    mode,
    timeoutMs: options.timeoutMs ?? DEFAULT_STARTUP_CHECK.timeoutMs,
    parseWaitMs: options.parseWaitMs ?? DEFAULT_STARTUP_CHECK.parseWaitMs,
  };
}

/** The boot failure: every problem on its own line, each starting with the setting to fix. */
export function startupCheckError(
  problems: Array<{ setting: string; message: string }>,
): ParseAgentConfigError {
  return new ParseAgentConfigError(
    `ParseAgentModule start-up check failed:\n${problems.map((p) => `  - ${p.setting}: ${p.message}`).join('\n')}\nFix the setting, or set startupCheck: 'warn' to log this and start anyway.`,
  );
}
