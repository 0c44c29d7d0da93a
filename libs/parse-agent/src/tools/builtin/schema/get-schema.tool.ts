import { readTool } from '../../read/read-tool';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { describeSchema } from './schema-description';
import { describeAgentMethods } from '../mutation/agent-method-gate';
import { GET_SCHEMA_OUTPUT } from '../output-schemas';

export const getSchema = readTool({
  name: 'get_schema',
  description:
    'Describe one class: its fields with types, descriptions and allowed values, pointer targets with query hints, indexes, permissions, filters, relations and the agent methods you may call.',
  category: 'schema',
  timeout: 10,
  outputSchema: GET_SCHEMA_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG },
    required: ['class_name'],
  },
  handler: async (args, { access, agent }) => {
    await access.requireReadableClass(args.class_name);
    const data = await describeSchema(access, args.class_name);
    const methods = describeAgentMethods(agent, access, args.class_name);
    if (methods.length) data.agent_methods = methods;
    return data;
  },
});
