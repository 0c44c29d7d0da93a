import { AgentValidationError } from '../core/errors';
import { identifierArg, iso8601Arg, objectIdArg, requireArg } from './prompt-arguments';

describe('prompt argument checks', () => {
  it('requires present, non-blank values', () => {
    expect(requireArg({ a: 'x' }, 'a')).toBe('x');
    expect(() => requireArg({}, 'a')).toThrow(
      new AgentValidationError('missing required argument: a'),
    );
    expect(() => requireArg({ a: '  ' }, 'a')).toThrow('missing required argument: a');
  });

  it('accepts Parse identifiers up to 128 characters and nothing else', () => {
    expect(identifierArg('_User', 'class_name')).toBe('_User');
    expect(identifierArg('a'.repeat(128), 'x')).toHaveLength(128);
    expect(() => identifierArg('a'.repeat(129), 'x')).toThrow(AgentValidationError);
    expect(() => identifierArg('Post"; drop', 'class_name')).toThrow(
      'class_name must match ^[A-Za-z_][A-Za-z0-9_]{0,127}$ (got: "Post"; drop")',
    );
    expect(() => identifierArg('9lives', 'class_name')).toThrow(AgentValidationError);
  });

  it('accepts alphanumeric object ids only', () => {
    expect(objectIdArg('Ab3dE6gH9j', 'parent_id')).toBe('Ab3dE6gH9j');
    expect(() => objectIdArg('abc-123', 'parent_id')).toThrow(
      'parent_id must be an alphanumeric objectId (got: "abc-123")',
    );
    expect(() => objectIdArg('a'.repeat(33), 'parent_id')).toThrow(AgentValidationError);
  });

  it.each([
    ['2024-01-01', '2024-01-01T00:00:00.000Z'],
    ['2024-01-01T10:20:30Z', '2024-01-01T10:20:30.000Z'],
    ['2024-01-01T10:20:30.5Z', '2024-01-01T10:20:30.500Z'],
    ['2024-01-01T10:20', '2024-01-01T10:20:00.000Z'],
    ['2024-01-01T02:00:00+02:00', '2024-01-01T00:00:00.000Z'],
    ['2024-01-01T00:00:00-0130', '2024-01-01T01:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('normalises %s to UTC with milliseconds', (input, expected) => {
    expect(iso8601Arg(input, 'since')).toBe(expected);
  });

  it.each(['yesterday', '2024-13-01', '2023-02-29', '2024-01-01T25:00:00Z', '01/02/2024', ''])(
    'refuses %p',
    (input) => {
      expect(() => iso8601Arg(input, 'since')).toThrow(
        `since must be a valid ISO8601 timestamp (got: "${input}")`,
      );
    },
  );
});
