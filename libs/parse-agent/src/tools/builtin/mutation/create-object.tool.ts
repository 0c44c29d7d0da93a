import { writeTool } from '../../write/write-tool';
import { CREATING_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { VALUES_ARG, WRITE_RESULT_SCHEMA } from './mutation-schemas';

export const createObject = writeTool({
  name: 'create_object',
  description:
    'Create one object in a class. Raw write: prefer a declared agent method (call_method) when one fits. The tenant field is set to your tenant automatically.',
  category: 'mutation',
  permission: 'write',
  timeout: 15,
  envGate: 'rawCrud',
  clientSafe: true,
  annotations: CREATING_TOOL,
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG, values: VALUES_ARG },
    required: ['class_name', 'values'],
    additionalProperties: false,
  },
  outputSchema: WRITE_RESULT_SCHEMA,
  handler: async (args, { write }) => {
    const created = await write.create(args.class_name, args.values);
    return {
      class_name: created.className,
      object_id: created.objectId,
      created_at: created.createdAt,
      changed_keys: created.changedKeys,
    };
  },
});
