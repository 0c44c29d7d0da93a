import { writeTool } from '../../write/write-tool';
import { DESTRUCTIVE_IDEMPOTENT_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, OBJECT_ID_ARG } from '../tool-schemas';
import { WRITE_RESULT_SCHEMA } from './mutation-schemas';

export const deleteObject = writeTool({
  name: 'delete_object',
  description:
    'Delete one object you can read. Asks the person to confirm first when the client supports it.',
  category: 'mutation',
  permission: 'admin',
  // Includes the time a person takes to answer the confirmation.
  timeout: 120,
  envGate: 'rawCrud',
  clientSafe: true,
  annotations: DESTRUCTIVE_IDEMPOTENT_TOOL,
  confirm: { asks: ['delete'] },
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG, object_id: OBJECT_ID_ARG },
    required: ['class_name', 'object_id'],
    additionalProperties: false,
  },
  outputSchema: WRITE_RESULT_SCHEMA,
  handler: async (args, { write }) => {
    const deleted = await write.delete(args.class_name, args.object_id);
    return { class_name: deleted.className, object_id: deleted.objectId, deleted: true };
  },
});
