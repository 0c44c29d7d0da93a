import { readTool } from '../../read/read-tool';
import { GET_ALL_SCHEMAS_OUTPUT } from '../output-schemas';

const DEFAULT_FIELD_COUNT = 4; // objectId, createdAt, updatedAt, ACL

export const getAllSchemas = readTool({
  name: 'get_all_schemas',
  description:
    'List the classes this agent can see with their field counts and descriptions. Narrow with names (exact) or prefix. Use get_schema for field details.',
  category: 'schema',
  timeout: 15,
  outputSchema: GET_ALL_SCHEMAS_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: {
      names: { type: 'array', items: { type: 'string' }, description: 'Only these class names.' },
      prefix: {
        type: 'string',
        description: 'Only classes whose name starts with this (case-sensitive).',
      },
    },
  },
  handler: async (args, { access }) => {
    const names = args.names?.length ? new Set(args.names) : undefined;
    const schemas = (await access.allSchemas())
      .filter((s) => !access.isDenied(s.className))
      .filter((s) => !names || names.has(s.className))
      .filter((s) => !args.prefix || s.className.startsWith(args.prefix))
      .sort((a, b) => a.className.localeCompare(b.className));
    const info = schemas.map((s) => {
      const meta = access.meta(s.className);
      const fieldCount = meta?.fields
        ? meta.fields.filter((f) => f in s.fields).length + 1
        : Object.keys(s.fields).length;
      const entry: Record<string, unknown> = {
        name: s.className,
        fields: Math.max(fieldCount - DEFAULT_FIELD_COUNT, 0),
      };
      if (meta?.description) entry.desc = meta.description;
      if (meta?.methods.length) entry.methods = meta.methods.length;
      return entry;
    });
    return {
      total: info.length,
      note: 'Use get_schema(class_name) for detailed field info',
      built_in: info.filter((i) => String(i.name).startsWith('_')),
      custom: info.filter((i) => !String(i.name).startsWith('_')),
    };
  },
});
