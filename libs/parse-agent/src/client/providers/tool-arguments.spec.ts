import { toolCallFromText } from './tool-arguments';

describe('toolCallFromText', () => {
  it('parses a JSON object and treats empty text as no arguments', () => {
    expect(toolCallFromText('1', 't', '{"a":1}')).toEqual({
      id: '1',
      name: 't',
      arguments: { a: 1 },
    });
    expect(toolCallFromText('1', 't', '')).toEqual({ id: '1', name: 't', arguments: {} });
  });

  it('flags text that is not a JSON object instead of guessing', () => {
    expect(toolCallFromText('1', 't', '{"a":').invalidArguments).toMatch(/not valid JSON/);
    expect(toolCallFromText('1', 't', '[1]').invalidArguments).toMatch(/not a JSON object/);
  });
});
