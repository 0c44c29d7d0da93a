import type { ToolDefinition } from '../../tool-definition';
import { READ_ONLY_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { describeSchema } from './schema-description';

export const getSchema: ToolDefinition<{ class_name: string }> = {
  name: 'get_schema',
  description:
    'Describe one class: its fields with types, descriptions and allowed values, pointer targets with query hints, indexes, permissions, filters and relations.',
  category: 'schema',
  permission: 'readonly',
  timeout: 10,
  annotations: READ_ONLY_TOOL,
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG },
    required: ['class_name'],
  },
  handler: async (args, { access }) => {
    await access.requireReadableClass(args.class_name);
    return describeSchema(access, args.class_name);
  },
};
