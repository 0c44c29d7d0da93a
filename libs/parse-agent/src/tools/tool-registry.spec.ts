import Ajv from 'ajv';
import { failure } from '../core/envelope';
import { toCallToolResult } from '../mcp/tool-call-result';
import { BUILTIN_TOOLS } from './builtin';
import { ToolRegistry } from './tool-registry';

describe('ToolRegistry output schemas', () => {
  const registry = new ToolRegistry(BUILTIN_TOOLS);
  const ajv = new Ajv({ strict: false });
  const refusal = failure('Object not found', 'parse_error', { kind: 'example' });

  it('lets every built-in tool, reads and writes alike, answer a failure as structuredContent', () => {
    const shapes = new Map<string, unknown>();
    for (const tool of registry.list()) {
      expect(tool.outputSchema).toBeDefined();
      const result = toCallToolResult(refusal, {
        toolName: tool.name,
        outputSchema: tool.outputSchema,
      });
      expect(result.isError).toBe(true);
      shapes.set(tool.name, result.structuredContent);
      // What a validating client checks: the failure fits the advertised schema.
      expect(ajv.validate(tool.outputSchema!, result.structuredContent)).toBe(true);
    }
    for (const name of [
      'update_object',
      'create_object',
      'delete_object',
      'group_by',
      'query_class',
    ])
      expect(shapes.get(name)).toEqual({
        error: 'Object not found',
        error_code: 'parse_error',
        details: { kind: 'example' },
      });
  });

  it('keeps an application tool’s own output schema as given', () => {
    const own = new ToolRegistry(BUILTIN_TOOLS);
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    own.register({
      name: 'own_count',
      description: 'Counts.',
      outputSchema: schema,
      handler: () => ({ n: 1 }),
    });
    expect(own.get('own_count')?.outputSchema).toEqual(schema);
  });
});

describe('ToolRegistry.register refuses what clients would refuse, saying how to fix it', () => {
  const base = { description: 'Counts.', handler: () => ({ n: 1 }) };
  const registry = () => new ToolRegistry(BUILTIN_TOOLS);

  it.each([
    ['a string', 'total'],
    ['an array', [{ type: 'object' }]],
    ['a number', 5],
    ['null', null],
    ['a non-object root', { type: 'array', items: { type: 'string' } }],
    ['a schema without type', { properties: { n: { type: 'integer' } } }],
  ])('an outputSchema that is %s', (_what, outputSchema) => {
    expect(() =>
      registry().register({ ...base, name: 'bad_output', outputSchema } as never),
    ).toThrow(/outputSchema must be a JSON Schema object whose root is type 'object'.*e\.g\./);
  });

  it('an outputSchema ajv cannot compile', () => {
    expect(() =>
      registry().register({
        ...base,
        name: 'bad_output',
        outputSchema: { type: 'object', properties: { n: { type: 'integr' } } },
      }),
    ).toThrow(/outputSchema is not a valid JSON Schema/);
  });

  it('an inputSchema whose root is not an object', () => {
    expect(() =>
      registry().register({ ...base, name: 'bad_input', inputSchema: 'n' as never }),
    ).toThrow(/inputSchema must be a JSON Schema object/);
  });

  it.each([
    ['a fractional', 1.5],
    ['a string', '30'],
    ['a zero', 0],
    ['a negative', -5],
    ['a NaN', Number.NaN],
    ['an infinite', Number.POSITIVE_INFINITY],
  ])('%s timeout', (_what, timeout) => {
    expect(() =>
      registry().register({ ...base, name: 'bad_timeout', timeout: timeout as number }),
    ).toThrow(/timeout must be a whole number of seconds above 0.*e\.g\. timeout: 30/);
  });

  it('accepts a whole timeout and an object output schema', () => {
    const tool = registry().register({
      ...base,
      name: 'good_tool',
      timeout: 45,
      outputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
    });
    expect(tool.timeout).toBe(45);
  });
});
