import { METADATA } from '../metadata.constants';
import { decoratorError } from './decorator-errors';

export interface AgentHiddenOptions {
  /** `'masterKey'`: master-key agents may still reach the class; every scoped agent may not. */
  except?: 'masterKey';
}

/** Hides the class from every agent: it is absent from schemas, refused by tools, redacted in results. */
export function AgentHidden(options: AgentHiddenOptions = {}): ClassDecorator {
  return (target) => {
    if (options.except !== undefined && options.except !== 'masterKey') {
      throw decoratorError(
        'AgentHidden',
        target,
        `except only accepts 'masterKey', got ${JSON.stringify(options.except)}.`,
      );
    }
    Reflect.defineMetadata(METADATA.hidden, { except: options.except }, target);
  };
}
