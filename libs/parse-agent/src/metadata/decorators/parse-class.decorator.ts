import { CLASS_NAME_PATTERN } from '../../core/constants';
import { METADATA } from '../metadata.constants';
import { decoratorError } from './decorator-errors';

/** Names the Parse class a model maps to (defaults to the TypeScript class name). */
export function ParseClass(name: string): ClassDecorator {
  return (target) => {
    if (typeof name !== 'string' || !CLASS_NAME_PATTERN.test(name)) {
      throw decoratorError(
        'ParseClass',
        target,
        `"${String(name)}" is not a valid Parse class name (letters, digits, underscore; at most 128 characters).`,
      );
    }
    Reflect.defineMetadata(METADATA.parseClass, name, target);
  };
}

/**
 * A description shown to agents in get_schema and get_all_schemas. `usage`, optional, is a hint on
 * how to query or analyse the class (which fields to group by, what to filter first), shown by
 * get_schema apart from the description.
 */
export function AgentDescription(text: string, options: { usage?: string } = {}): ClassDecorator {
  return (target) => {
    if (typeof text !== 'string' || !text.trim()) {
      throw decoratorError(
        'AgentDescription',
        target,
        'the description must be a non-empty string.',
      );
    }
    const usage: unknown = options?.usage;
    if (usage !== undefined && (typeof usage !== 'string' || !usage.trim())) {
      throw decoratorError('AgentDescription', target, 'usage must be a non-empty string.');
    }
    Reflect.defineMetadata(METADATA.description, text.trim(), target);
    if (typeof usage === 'string') Reflect.defineMetadata(METADATA.usage, usage.trim(), target);
  };
}

/**
 * Marks a model as part of the agent-facing domain. Not access control: when any model is visible,
 * relation graphs and audits consider only visible models.
 */
export function AgentVisible(): ClassDecorator {
  return (target) => Reflect.defineMetadata(METADATA.visible, true, target);
}

/** Lets query tools run unindexed (collection-scan) queries on this class. */
export function AgentAllowCollscan(): ClassDecorator {
  return (target) => Reflect.defineMetadata(METADATA.allowCollscan, true, target);
}
