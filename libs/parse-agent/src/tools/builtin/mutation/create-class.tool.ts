import { CLASS_NAME_PATTERN } from '../../../core/constants';
import { AccessDeniedError, AgentValidationError } from '../../../core/errors';
import { isPlainObject } from '../../../core/plain-object';
import type { ToolDefinition } from '../../tool-definition';
import { CREATING_TOOL } from '../tool-annotations';
import { CLASS_NAME_ARG } from '../tool-schemas';
import { writeOperation } from './write-path';
import { CREATE_CLASS_OUTPUT } from '../output-schemas';

interface Args {
  class_name: string;
  fields: Record<string, { type: string; target_class?: string }>;
}

const FIELD_TYPES = [
  'String',
  'Number',
  'Boolean',
  'Date',
  'Object',
  'Array',
  'GeoPoint',
  'File',
  'Pointer',
  'Relation',
  'Polygon',
];
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,127}$/;

export const createClass: ToolDefinition<Args> = {
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
          properties: { type: { enum: FIELD_TYPES }, target_class: { type: 'string' } },
          required: ['type'],
          additionalProperties: false,
        },
      },
    },
    required: ['class_name', 'fields'],
    additionalProperties: false,
  },
  handler: async (args, { access, writeData, signal, audit }) => {
    const className = args.class_name;
    if (!CLASS_NAME_PATTERN.test(className) || className.startsWith('_')) {
      throw new AgentValidationError(
        `'${className}' is not a valid new class name (letters, digits, underscores; no leading underscore).`,
      );
    }
    access.assertClassAccessible(className);
    if (await access.schema(className)) {
      throw new AgentValidationError(`Class '${className}' already exists.`);
    }
    if (!isPlainObject(args.fields)) throw new AgentValidationError('fields must be an object.');
    const fields: Record<string, { type: string; targetClass?: string }> = {};
    for (const [name, spec] of Object.entries(args.fields)) {
      if (!FIELD_NAME.test(name) || ['objectId', 'createdAt', 'updatedAt', 'ACL'].includes(name)) {
        throw new AgentValidationError(`fields: '${name}' is not a field name you can declare.`);
      }
      const needsTarget = spec.type === 'Pointer' || spec.type === 'Relation';
      if (needsTarget !== (spec.target_class !== undefined)) {
        throw new AgentValidationError(
          `fields.${name}: target_class is required for Pointer and Relation fields, and only for them.`,
        );
      }
      if (spec.target_class !== undefined && access.isDenied(spec.target_class)) {
        throw new AccessDeniedError(
          `fields.${name} points to '${spec.target_class}', which is not accessible to this agent.`,
          { kind: 'hidden_class', deniedField: name },
        );
      }
      fields[name] = spec.target_class
        ? { type: spec.type, targetClass: spec.target_class }
        : { type: spec.type };
    }
    await writeOperation(writeData, 'createClass').call(writeData, className, { fields }, signal);
    access.schemasChanged();
    audit({ action: 'create_class', class_name: className, changed_keys: Object.keys(fields) });
    return { class_name: className, created: true, fields: Object.keys(fields) };
  },
};
