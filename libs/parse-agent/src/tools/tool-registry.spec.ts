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
