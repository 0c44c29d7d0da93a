import { CLASS_FIELD_TYPES } from '../../../security/write-policy';
import { writeTool } from '../../write/write-tool';
import { CREATING_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { CREATE_CLASS_OUTPUT } from '../output-schemas';

export const createClass = writeTool({
  name: 'create_class',
  description:
    'Create a new class with typed fields. Changes the application schema: operator use only.',
  category: 'mutation',
  permission: 'admin',
  timeout: 30,
  envGate: 'rawSchema',
  // Schema changes need the master key: never available to a session-token (client mode) agent.
  clientSafe: false,
  annotations: CREATING_TOOL,
  outputSchema: CREATE_CLASS_OUTPUT,
  inputSchema: {
    type: 'object',
    properties: {
      class_name: CLASS_NAME_ARG,
      fields: {
        type: 'object',
        description:
          'Field name -> { "type": "String" | "Number" | "Boolean" | "Date" | "Object" | "Array" | "GeoPoint" | "File" | "Pointer" | "Relation" | "Polygon", "target_class"?: "Class" (Pointer/Relation) }.',
        additionalProperties: {
          type: 'object',
          properties: { type: { enum: CLASS_FIELD_TYPES }, target_class: { type: 'string' } },
          required: ['type'],
          additionalProperties: false,
        },
      },
    },
    required: ['class_name', 'fields'],
    additionalProperties: false,
  },
  handler: async (args, { write }) => {
    const created = await write.createClass(args.class_name, args.fields);
    return { class_name: created.className, created: true, fields: created.fields };
  },
});
