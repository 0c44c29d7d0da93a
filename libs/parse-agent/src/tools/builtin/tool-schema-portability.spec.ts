import { BUILTIN_TOOLS } from './index';

/**
 * Every built-in tool's inputSchema and outputSchema must be readable by every MCP client, not only
 * by full JSON Schema validators. These are the constructs that are legal JSON Schema yet refused or
 * quietly dropped by real clients (what MCP Inspector's `--strict` schema report flags):
 * - `type` as an array (`["string", "null"]`): many clients read `type` as one string; spell a
 *   union as `anyOf` branches with one `type` each;
 * - a schema with no validating keyword (`{}`, or only a description): it accepts anything, like a
 *   bare `true`; give it a `type` (or an `anyOf` of typed branches);
 * - a bare boolean where a schema is expected (`additionalProperties: true` is fine);
 * - a `$ref` outside the document;
 * - an inputSchema whose root is not an object.
 */

type Schema = Record<string, unknown>;

const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_SLOTS = [
  'items',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
];
/** Slots where `true`/`false` is the idiomatic spelling every client understands. */
const BOOLEAN_SLOTS = new Set([
  'additionalProperties',
  'unevaluatedProperties',
  'additionalItems',
  'unevaluatedItems',
]);
/** Keywords that constrain a value; a schema with none of them accepts anything. */
const VALIDATING = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  '$ref',
  'properties',
  'patternProperties',
  'additionalProperties',
  'required',
  'items',
  'prefixItems',
  'contains',
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
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'propertyNames',
  'if',
]);

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Non-portable constructs in one schema, as `path: problem` lines (empty when portable). */
export function portabilityProblems(
  schema: unknown,
  path = '',
  slot: string | undefined = undefined,
): string[] {
  const at = path || '(root)';
  if (typeof schema === 'boolean') {
    return slot !== undefined && BOOLEAN_SLOTS.has(slot)
      ? []
      : [`${at}: bare ${String(schema)} where a schema is expected`];
  }
  if (!isSchema(schema)) return [];
  const problems: string[] = [];
  if (Array.isArray(schema.type)) {
    problems.push(`${at}: type is an array (${JSON.stringify(schema.type)}); use anyOf`);
  }
  if (!Object.keys(schema).some((key) => VALIDATING.has(key))) {
    problems.push(`${at}: untyped (accepts any value); give it a type`);
  }
  if (typeof schema.$ref === 'string' && !schema.$ref.startsWith('#')) {
    problems.push(`${at}: $ref outside the document (${schema.$ref})`);
  }
  const child = (key: string) => (path ? `${path}.${key}` : key);
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (!isSchema(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      problems.push(...portabilityProblems(sub, child(`${key}.${name}`), key));
    }
  }
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (!Array.isArray(list)) continue;
    list.forEach((sub, i) =>
      problems.push(...portabilityProblems(sub, child(`${key}[${i}]`), key)),
    );
  }
  for (const key of SCHEMA_SLOTS) {
    if (key in schema) problems.push(...portabilityProblems(schema[key], child(key), key));
  }
  return problems;
}

describe('portability of the built-in tools’ schemas', () => {
  it.each(BUILTIN_TOOLS.map((tool) => [tool.name, tool] as const))(
    '%s: inputSchema is an object schema every client can read',
    (_name, tool) => {
      expect(tool.inputSchema.type).toBe('object');
      expect(portabilityProblems(tool.inputSchema)).toEqual([]);
    },
  );

  it.each(BUILTIN_TOOLS.map((tool) => [tool.name, tool] as const))(
    '%s: outputSchema is one every client can read',
    (_name, tool) => {
      expect(tool.outputSchema).toBeDefined();
      expect(portabilityProblems(tool.outputSchema)).toEqual([]);
    },
  );

  describe('the check itself', () => {
    it('flags type arrays, untyped schemas, bare booleans and remote refs, wherever they sit', () => {
      expect(
        portabilityProblems({
          type: 'object',
          properties: {
            a: { type: ['string', 'null'] },
            b: {},
            c: { description: 'only words' },
            d: true,
            e: { type: 'array', items: { $ref: 'https://example.com/x.json' } },
            f: { anyOf: [{ type: 'string' }, { description: 'x' }] },
          },
        }),
      ).toEqual([
        'properties.a: type is an array (["string","null"]); use anyOf',
        'properties.b: untyped (accepts any value); give it a type',
        'properties.c: untyped (accepts any value); give it a type',
        'properties.d: bare true where a schema is expected',
        'properties.e.items: $ref outside the document (https://example.com/x.json)',
        'properties.f.anyOf[1]: untyped (accepts any value); give it a type',
      ]);
    });

    it('accepts typed schemas, anyOf unions, local refs and boolean additionalProperties', () => {
      expect(
        portabilityProblems({
          type: 'object',
          properties: {
            a: { anyOf: [{ type: 'string' }, { type: 'null' }] },
            b: { type: 'object', additionalProperties: true },
            c: { enum: ['x', 'y'] },
            d: { $ref: '#/$defs/d' },
          },
          $defs: { d: { type: 'integer' } },
          additionalProperties: false,
        }),
      ).toEqual([]);
    });
  });
});
