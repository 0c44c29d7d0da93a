import { writeTool } from '../../write/write-tool';
import { DESTRUCTIVE_IDEMPOTENT_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { DELETE_CLASS_OUTPUT } from '../output-schemas';

export const deleteClass = writeTool({
  name: 'delete_class',
  description:
    'Delete an empty class from the schema. Asks the person to confirm first. Operator use only.',
  category: 'mutation',
  permission: 'admin',
  timeout: 120,
  envGate: 'rawSchema',
  clientSafe: false,
  annotations: DESTRUCTIVE_IDEMPOTENT_TOOL,
  confirm: { asks: ['delete_class'] },
  outputSchema: DELETE_CLASS_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG },
    required: ['class_name'],
    additionalProperties: false,
  },
  handler: async (args, { write }) => {
    const deleted = await write.deleteClass(args.class_name);
    return { class_name: deleted.className, deleted: true };
  },
});
