import { AgentValidationError } from '../../core/errors';
import { dryRunFlag } from './dry-run-flag';

describe('dryRunFlag', () => {
  it('reads true, false and absent', () => {
    expect(dryRunFlag(true)).toBe(true);
    expect(dryRunFlag(false)).toBe(false);
    expect(dryRunFlag(undefined)).toBe(false);
  });

  it.each([[1], [0], ['true'], ['True'], ['yes'], ['false'], [null], [{}], [[]]])(
    'refuses %j, saying to pass true or false',
    (value) => {
      expect(() => dryRunFlag(value, 'arguments.dry_run')).toThrow(AgentValidationError);
      expect(() => dryRunFlag(value, 'arguments.dry_run')).toThrow(
        /^arguments\.dry_run must be true or false \(a JSON boolean\), not .*pass true to preview or false to run/,
      );
    },
  );
});
