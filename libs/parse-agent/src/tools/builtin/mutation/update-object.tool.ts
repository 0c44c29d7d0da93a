import { WritePolicy } from '../../../security/write-policy';
import type { ToolDefinition } from '../../tool-definition';
import { DESTRUCTIVE_IDEMPOTENT_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG, OBJECT_ID_ARG } from '../tool-schemas';
import { VALUES_ARG, WRITE_RESULT_SCHEMA } from './mutation-schemas';
import { writeOperation } from './write-path';
import { writeToReadableObject } from './write-refused';

interface Args {
  class_name: string;
  object_id: string;
  values: Record<string, unknown>;
}

export const updateObject: ToolDefinition<Args> = {
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
  handler: async (args, { access, writeData, signal, audit }) => {
    const policy = new WritePolicy(access);
    const plan = await policy.planUpdate(args.class_name, args.values);
    await policy.assertRowWritable(writeData, args.class_name, args.object_id, signal);
    const updated = await writeToReadableObject(args.class_name, args.object_id, () =>
      writeOperation(writeData, 'update').call(
        writeData,
        args.class_name,
        args.object_id,
        plan.values,
        signal,
      ),
    );
    audit({
      action: 'update',
      class_name: args.class_name,
      object_id: args.object_id,
      changed_keys: plan.changedKeys,
    });
    return {
      class_name: args.class_name,
      object_id: args.object_id,
      updated_at: updated.updatedAt,
      changed_keys: plan.changedKeys,
    };
  },
};
