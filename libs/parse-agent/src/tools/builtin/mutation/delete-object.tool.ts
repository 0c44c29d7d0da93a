import { WritePolicy } from '../../../security/write-policy';
import type { ToolDefinition } from '../../tool-definition';
import { DESTRUCTIVE_IDEMPOTENT_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, OBJECT_ID_ARG } from '../tool-schemas';
import { WRITE_RESULT_SCHEMA } from './mutation-schemas';
import { precheckWrite, writeOperation } from './write-path';
import { writeToReadableObject } from './write-refused';

interface Args {
  class_name: string;
  object_id: string;
}

export const deleteObject: ToolDefinition<Args> = {
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
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG, object_id: OBJECT_ID_ARG },
    required: ['class_name', 'object_id'],
    additionalProperties: false,
  },
  outputSchema: WRITE_RESULT_SCHEMA,
  handler: async (args, { access, writeData, signal, audit, confirm }) => {
    await new WritePolicy(access).assertRowWritable(
      writeData,
      args.class_name,
      args.object_id,
      signal,
    );
    await precheckWrite(writeData, 'delete', args.class_name, args.object_id, signal);
    await confirm({
      message: `Delete ${args.class_name} ${args.object_id}? This cannot be undone.`,
      tool: 'delete_object',
      className: args.class_name,
      objectId: args.object_id,
    });
    await writeToReadableObject(args.class_name, args.object_id, () =>
      writeOperation(writeData, 'delete').call(writeData, args.class_name, args.object_id, signal),
    );
    audit({
      action: 'delete',
      class_name: args.class_name,
      object_id: args.object_id,
      changed_keys: [],
    });
    return { class_name: args.class_name, object_id: args.object_id, deleted: true };
  },
};
