import { ALWAYS_KEEP_FIELDS } from '../../core/constants';
import { isInternalField } from '../../query/internal-fields';
import { METADATA } from '../metadata.constants';
import type { AgentFieldOptions, FieldDoc } from '../metadata.types';
import { decoratorError } from './decorator-errors';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
type Target = Function;

/** Property name -> wire name, from @AgentField({ field }) on the model's properties. */
export function wireNameOf(target: Target, name: string): string {
  const docs = (Reflect.getMetadata(METADATA.fieldDocs, target) ?? {}) as Record<string, FieldDoc>;
  return docs[name]?.field ?? name;
}

function checkNames(decorator: string, target: Target, names: string[]): string[] {
  if (!names.length) throw decoratorError(decorator, target, 'list at least one field.');
  for (const name of names) {
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw decoratorError(decorator, target, `${JSON.stringify(name)} is not a field name.`);
    }
    if (isInternalField(name)) {
      throw decoratorError(
        decorator,
        target,
        `'${name}' is an internal Parse field and can never be exposed to agents; remove it.`,
      );
    }
  }
  // Names as declared (properties or columns): the registry maps properties to their columns
  // once every decorator of the model has run (@BelongsTo's `field` included).
  return [...new Set(names)];
}

function checkJoinSubset(target: Target) {
  const fields = Reflect.getMetadata(METADATA.fields, target) as string[] | undefined;
  const join = Reflect.getMetadata(METADATA.joinFields, target) as string[] | undefined;
  if (!fields || !join) return;
  // Compared as columns, so a property and its column name count as the same field.
  const allowed = new Set<string>([
    ...fields.map((f) => wireNameOf(target, f)),
    ...ALWAYS_KEEP_FIELDS,
  ]);
  const outside = join.filter((f) => !allowed.has(wireNameOf(target, f)));
  if (outside.length) {
    throw decoratorError(
      'AgentJoinFields',
      target,
      `${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not in @AgentFields; join fields must be a subset of the allowlist. Add them to @AgentFields or drop them here.`,
    );
  }
}

/** The allowlist: agents see (and may filter or sort on) only these fields of the class. */
export function AgentFields(...names: string[]): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(METADATA.fields, checkNames('AgentFields', target, names), target);
    checkJoinSubset(target);
  };
}

/** The fields returned when another class includes this one through a pointer. */
export function AgentJoinFields(...names: string[]): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(
      METADATA.joinFields,
      checkNames('AgentJoinFields', target, names),
      target,
    );
    checkJoinSubset(target);
  };
}

/** Fields too big to pull into joined rows (long texts, blobs); flagged in schemas. */
export function AgentLargeFields(...names: string[]): ClassDecorator {
  return (target) => {
    Reflect.defineMetadata(
      METADATA.largeFields,
      checkNames('AgentLargeFields', target, names),
      target,
    );
  };
}

/** Documents one field for agents: description, allowed values, type, and its wire name. */
export function AgentField(options: AgentFieldOptions = {}): PropertyDecorator {
  return (prototype, propertyKey) => {
    const target = prototype.constructor;
    const property = String(propertyKey);
    const field = options.field ?? property;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field) || isInternalField(field)) {
      throw decoratorError(
        'AgentField',
        target,
        `'${field}' (property ${property}) cannot be documented for agents.`,
      );
    }
    let allowedValues: FieldDoc['allowedValues'];
    if (Array.isArray(options.enum)) {
      allowedValues = options.enum.map((v) => ({ value: String(v), description: '' }));
    } else if (options.enum && typeof options.enum === 'object') {
      allowedValues = Object.entries(options.enum).map(([value, description]) => ({
        value,
        description: String(description),
      }));
    } else if (options.enum !== undefined) {
      throw decoratorError(
        'AgentField',
        target,
        `enum of ${property} must be an array or a value -> description map.`,
      );
    }
    const docs = {
      ...((Reflect.getMetadata(METADATA.fieldDocs, target) ?? {}) as Record<string, FieldDoc>),
    };
    docs[property] = {
      property,
      field,
      description: options.description,
      type: options.type,
      allowedValues,
    };
    Reflect.defineMetadata(METADATA.fieldDocs, docs, target);
  };
}
