import { ParseAgentConfigError } from '../../../core/errors';
import type { AgentMethodDeclaration, ModelClass } from '../../../metadata/metadata.types';
import { isParseObjectModel } from '../../../metadata/parse-object-model';
import type { DataPath, DataRow } from '../../../ports/data-path';
import { sdkMethodTarget } from './sdk-method-target';

/** What an agent method runs on: its `this`, its function, and the SDK refusal to report. */
export interface MethodTarget {
  self: unknown;
  fn: (args: DataRow, context: unknown) => unknown;
  /** The first SDK call the method was refused (SDK models only). */
  refusal(): Error | undefined;
}

export interface MethodTargetOptions {
  model: ModelClass | undefined;
  method: AgentMethodDeclaration;
  className: string;
  qualified: string;
  /** The object an instance method acts on, as the agent read it. */
  object: DataRow | undefined;
  /** The method's `ctx.data`: an SDK model's save() and destroy() write through it. */
  data: DataPath;
  signal: AbortSignal;
}

/**
 * The `this` of an agent method: the model class for a class method; for an instance method a
 * real SDK instance built from the row (Parse.Object models, see sdkMethodTarget) or an object of
 * the model's prototype holding the row's fields.
 */
export function methodTarget(options: MethodTargetOptions): MethodTarget {
  const { model, method, className, qualified, object } = options;
  let self = model as Record<string, unknown> | undefined;
  let refusal: () => Error | undefined = () => undefined;
  if (model && object && !method.static) {
    if (isParseObjectModel(model)) {
      const sdk = sdkMethodTarget(model, {
        className,
        qualified,
        row: object,
        data: options.data,
        signal: options.signal,
      });
      self = sdk.object as Record<string, unknown>;
      refusal = () => sdk.refusal();
    } else {
      self = Object.assign(Object.create(model.prototype as object) as object, object);
    }
  }
  const fn = self?.[method.name];
  if (typeof fn !== 'function') {
    throw new ParseAgentConfigError(`Agent method '${qualified}' has no implementation.`);
  }
  return { self, fn: fn as MethodTarget['fn'], refusal };
}
