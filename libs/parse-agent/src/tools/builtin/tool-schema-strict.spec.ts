import Ajv from 'ajv';
import { ToolRegistry } from '../tool-registry';
import { BUILTIN_TOOLS } from './index';

/**
 * The built-in tools' schemas as strict clients read them. Two readers:
 *
 * - ajv in strict mode (unknown keywords, `required` naming undeclared properties, type keywords
 *   without a `type`, ambiguous tuples are errors): what a validating MCP client compiles before it
 *   trusts `structuredContent`;
 * - the constraints of OpenAI's strict function calling that apply to a schema as it stands (the
 *   ones that do not ask every property to be required): every array names its `items`, every
 *   object says `type: 'object'`, only the keywords that mode understands, a `$ref` only to the
 *   document's own `$defs`, an arguments schema whose root is a plain object.
 *
 * Checked on what clients receive: the registry's published definitions (arguments closed, the
 * failure shape added to the results), and on the definitions as written.
 */

type Schema = Record<string, unknown>;

/** Keywords OpenAI's strict mode understands (annotations included). */
const STRICT_KEYWORDS = new Set([
  'type',
  'description',
  'title',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$defs',
  '$ref',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minItems',
  'maxItems',
]);
const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties'];
const ARRAY_KEYWORDS = ['items', 'minItems', 'maxItems'];

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function typesOf(schema: Schema): string[] {
  return typeof schema.type === 'string' ? [schema.type] : [];
}

/** Problems a strict client finds in one schema, as `path: problem` lines. */
export function strictClientProblems(root: unknown): string[] {
  const problems: string[] = [];
  const defs = isSchema(root) && isSchema(root.$defs) ? root.$defs : {};
  const visit = (schema: unknown, path: string) => {
    const at = path || '(root)';
    if (!isSchema(schema)) {
      problems.push(`${at}: not a schema object (${JSON.stringify(schema)})`);
      return;
    }
    for (const key of Object.keys(schema)) {
      if (!STRICT_KEYWORDS.has(key)) problems.push(`${at}: keyword '${key}' is not understood`);
    }
    const types = typesOf(schema);
    if (OBJECT_KEYWORDS.some((k) => k in schema) && !types.includes('object')) {
      problems.push(`${at}: object keywords without type: 'object'`);
    }
    if (ARRAY_KEYWORDS.some((k) => k in schema) && !types.includes('array')) {
      problems.push(`${at}: array keywords without type: 'array'`);
    }
    if (types.includes('array') && !isSchema(schema.items)) {
      problems.push(`${at}: array without items`);
    }
    if (typeof schema.$ref === 'string') {
      const name = /^#\/\$defs\/([^/]+)$/.exec(schema.$ref)?.[1];
      if (!name || !(name in defs)) problems.push(`${at}: $ref ${schema.$ref} does not resolve`);
    }
    if (path && '$defs' in schema) problems.push(`${at}: $defs below the root`);
    const child = (key: string) => (path ? `${path}.${key}` : key);
    for (const key of ['properties', '$defs']) {
      if (!isSchema(schema[key])) continue;
      for (const [name, sub] of Object.entries(schema[key] as Schema)) {
        visit(sub, child(`${key}.${name}`));
      }
    }
    if (Array.isArray(schema.anyOf)) {
      schema.anyOf.forEach((sub, i) => visit(sub, child(`anyOf[${i}]`)));
    }
    if ('items' in schema) visit(schema.items, child('items'));
    if (isSchema(schema.additionalProperties)) {
      visit(schema.additionalProperties, child('additionalProperties'));
    }
  };
  visit(root, '');
  return problems;
}

/** What an arguments schema must be besides: a plain object at its root. */
function inputRootProblems(schema: Schema): string[] {
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push(`(root): arguments must be type: 'object'`);
  if ('anyOf' in schema) problems.push('(root): arguments may not be a union');
  return problems;
}

/** ajv strict mode's verdict: undefined when it compiles, else its complaint. */
function ajvStrictProblem(schema: Schema): string | undefined {
  const ajv = new Ajv({
    strict: true,
    strictSchema: true,
    strictNumbers: true,
    strictTypes: true,
    strictTuples: true,
    strictRequired: true,
    allErrors: true,
    validateFormats: false,
  });
  try {
    ajv.compile(schema);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const published = new ToolRegistry(BUILTIN_TOOLS).list();
const sides = [
  ...published.map((tool) => [`${tool.name} (published)`, tool] as const),
  ...BUILTIN_TOOLS.map((tool) => [`${tool.name} (as written)`, tool] as const),
];

describe('the built-in tools’ schemas under strict clients', () => {
  it('covers every built-in tool', () => {
    expect(published.map((t) => t.name)).toEqual(BUILTIN_TOOLS.map((t) => t.name));
    expect(published.length).toBeGreaterThan(20);
  });

  it.each(sides)('%s: inputSchema compiles under ajv strict mode', (_name, tool) => {
    expect(ajvStrictProblem(tool.inputSchema)).toBeUndefined();
  });

  it.each(sides)('%s: outputSchema compiles under ajv strict mode', (_name, tool) => {
    expect(tool.outputSchema).toBeDefined();
    expect(ajvStrictProblem(tool.outputSchema!)).toBeUndefined();
  });

  it.each(sides)('%s: inputSchema meets the strict-client constraints', (_name, tool) => {
    expect([
      ...inputRootProblems(tool.inputSchema),
      ...strictClientProblems(tool.inputSchema),
    ]).toEqual([]);
  });

  it.each(sides)('%s: outputSchema meets the strict-client constraints', (_name, tool) => {
    expect(isSchema(tool.outputSchema) && tool.outputSchema.type).toBe('object');
    expect(strictClientProblems(tool.outputSchema)).toEqual([]);
  });

  describe('the check itself', () => {
    it('finds arrays without items, untyped objects, unknown keywords and loose refs', () => {
      expect(
        strictClientProblems({
          type: 'object',
          properties: {
            a: { type: 'array' },
            b: { properties: { c: { type: 'string' } } },
            d: { type: 'string', examples: ['x'] },
            e: { $ref: '#/$defs/missing' },
            f: { anyOf: [{ type: 'array', items: { type: 'array' } }] },
            g: { items: { type: 'string' } },
          },
        }),
      ).toEqual([
        'properties.a: array without items',
        "properties.b: object keywords without type: 'object'",
        "properties.d: keyword 'examples' is not understood",
        'properties.e: $ref #/$defs/missing does not resolve',
        'properties.f.anyOf[0].items: array without items',
        "properties.g: array keywords without type: 'array'",
      ]);
    });

    it('accepts a recursive value through the root $defs', () => {
      const value = {
        anyOf: [
          { type: 'string' },
          { type: 'object' },
          { type: 'array', items: { $ref: '#/$defs/value' } },
        ],
      };
      expect(
        strictClientProblems({
          type: 'object',
          properties: { v: { $ref: '#/$defs/value' } },
          $defs: { value },
        }),
      ).toEqual([]);
    });

    it('reports what ajv strict mode refuses', () => {
      expect(ajvStrictProblem({ type: 'object', required: ['x'] })).toMatch(/required/);
      expect(ajvStrictProblem({ type: 'object', properties: {}, example: 1 })).toMatch(
        /unknown keyword/,
      );
      expect(ajvStrictProblem({ type: 'object', properties: {} })).toBeUndefined();
    });
  });
});
