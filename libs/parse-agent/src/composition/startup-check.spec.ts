import { ParseAgentConfigError } from '../core/errors';
import { DEFAULT_STARTUP_CHECK, resolveStartupCheck, startupCheckError } from './startup-check';

describe('resolveStartupCheck', () => {
  it("defaults to 'fail' with a 5 s probe limit and a 30 s wait for Parse Server", () => {
    expect(resolveStartupCheck(undefined)).toEqual({
      mode: 'fail',
      timeoutMs: 5_000,
      parseWaitMs: 30_000,
    });
    expect(resolveStartupCheck('warn')).toEqual({ ...DEFAULT_STARTUP_CHECK, mode: 'warn' });
    expect(resolveStartupCheck({ mode: 'off', parseWaitMs: 10 })).toEqual({
      mode: 'off',
      timeoutMs: 5_000,
      parseWaitMs: 10,
    });
  });

  it('refuses a wrong value, naming startupCheck', () => {
    for (const bad of ['strict', { mode: 'loud' }, { timeoutMs: 0 }, { parseWaitMs: -1 }, 3]) {
      expect(() => resolveStartupCheck(bad as never)).toThrow(ParseAgentConfigError);
      expect(() => resolveStartupCheck(bad as never)).toThrow(/startupCheck/);
    }
  });
});

describe('startupCheckError', () => {
  it('is a ParseAgentConfigError listing each setting on its own line, with the way out', () => {
    const error = startupCheckError([
      { setting: 'parse.masterKey', message: 'refused.' },
      { setting: 'postgres.uri', message: 'closed.' },
    ]);
    expect(error).toBeInstanceOf(ParseAgentConfigError);
    expect(error.errorCode).toBe('invalid_configuration');
    expect(error.message).toBe(
      "ParseAgentModule start-up check failed:\n  - parse.masterKey: refused.\n  - postgres.uri: closed.\nFix the setting, or set startupCheck: 'warn' to log this and start anyway.",
    );
  });
});
