import { writeTool } from '../../write/write-tool';
import { DESTRUCTIVE_IDEMPOTENT_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, OBJECT_ID_ARG } from '../tool-schemas';
import { VALUES_ARG, WRITE_RESULT_SCHEMA } from './mutation-schemas';

export const updateObject = writeTool({
  name: 'update_object',
  description:
    'Change fields of one object you can read. Raw write: prefer a declared agent method (call_method) when one fits. The tenant field cannot be changed.',
  category: 'mutation',
  permission: 'write',
  timeout: 15,
  envGate: 'rawCrud',
  clientSafe: true,
  annotations: DESTRUCTIVE_IDEMPOTENT_TOOL,
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG, object_id: OBJECT_ID_ARG, values: VALUES_ARG },
    required: ['class_name', 'object_id', 'values'],
    additionalProperties: false,
  },
  outputSchema: WRITE_RESULT_SCHEMA,
  handler: async (args, { write }) => {
    const updated = await write.update(args.class_name, args.object_id, args.values);
    return {
      class_name: updated.className,
      object_id: updated.objectId,
      updated_at: updated.updatedAt,
      changed_keys: updated.changedKeys,
    };
  },
});
