import { AgentValidationError } from '../../../core/errors';
import type { ToolDefinition } from '../../tool-definition';
import { DESTRUCTIVE_IDEMPOTENT_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { writeOperation } from './write-path';
import { DELETE_CLASS_OUTPUT } from '../output-schemas';

export const deleteClass: ToolDefinition<{ class_name: string }> = {
  name: 'delete_class',
  description:
    'Delete an empty class from the schema. Asks the person to confirm first. Operator use only.',
  category: 'mutation',
  permission: 'admin',
  timeout: 120,
  envGate: 'rawSchema',
  clientSafe: false,
  annotations: DESTRUCTIVE_IDEMPOTENT_TOOL,
  outputSchema: DELETE_CLASS_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: { class_name: CLASS_NAME_ARG },
    required: ['class_name'],
    additionalProperties: false,
  },
  handler: async (args, { access, writeData, signal, audit, confirm }) => {
    const className = args.class_name;
    await access.requireReadableClass(className);
    if (className.startsWith('_')) {
      throw new AgentValidationError(
        `'${className}' is a Parse system class and cannot be deleted.`,
      );
    }
    if (access.meta(className)) {
      throw new AgentValidationError(
        `'${className}' is declared by a model of this application; remove the model before deleting its class.`,
      );
    }
    if (!(await access.schema(className))) {
      throw new AgentValidationError(`Class '${className}' does not exist.`);
    }
    await confirm({
      message: `Delete the class ${className} from the schema? This cannot be undone.`,
      tool: 'delete_class',
      className,
    });
    await writeOperation(writeData, 'deleteClass').call(writeData, className, signal);
    access.schemasChanged();
    audit({ action: 'delete_class', class_name: className, changed_keys: [] });
    return { class_name: className, deleted: true };
  },
};
