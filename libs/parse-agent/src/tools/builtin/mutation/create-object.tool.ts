import { WritePolicy } from '../../../security/write-policy';
import type { ToolDefinition } from '../../tool-definition';
import { CREATING_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { writeOperation } from './write-path';
import { VALUES_ARG, WRITE_RESULT_SCHEMA } from './mutation-schemas';

interface Args {
  class_name: string;
  values: Record<string, unknown>;
}

export const createObject: ToolDefinition<Args> = {
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
  handler: async (args, { access, writeData, signal, audit }) => {
    const plan = await new WritePolicy(access).planCreate(args.class_name, args.values);
    const created = await writeOperation(writeData, 'create').call(
      writeData,
      args.class_name,
      plan.values,
      signal,
    );
    audit({
      action: 'create',
      class_name: args.class_name,
      object_id: created.objectId,
      changed_keys: plan.changedKeys,
    });
    return {
      class_name: args.class_name,
      object_id: created.objectId,
      created_at: created.createdAt,
      changed_keys: plan.changedKeys,
    };
  },
};
