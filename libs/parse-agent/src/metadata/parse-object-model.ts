import { ParseAgentConfigError } from '../core/errors';
import type { ModelClass } from './metadata.types';

/**
 * The members of a Parse JS SDK object the library uses. Read structurally: the library never
 * imports `parse`, so an application with plain model classes does not need it, and one with SDK
 * models works with its own copy of the SDK (never a second one).
 */
export interface ParseSdkObject {
  className?: string;
  id?: string;
  readonly attributes: Record<string, unknown>;
  get(key: string): unknown;
  set(key: string | Record<string, unknown>, value?: unknown): unknown;
  dirtyKeys(): string[];
  _finishFetch(serverData: Record<string, unknown>): void;
  _setExisted(existed: boolean): void;
  _getSaveJSON(): Record<string, unknown>;
  _handleSaveResponse(response: Record<string, unknown>, status: number): void;
}

/** Prototype members every SDK object has; a class with all of them is taken for an SDK model. */
const SDK_SHAPE = ['get', 'set', 'save', 'destroy', 'fetch', 'dirtyKeys', 'toPointer'] as const;
/** Static members of Parse.Object (inherited by every subclass). */
const SDK_STATICS = ['registerSubclass', 'fromJSON', 'createWithoutData'] as const;
/** The SDK internals an agent method's instance is built and saved with. */
const SDK_INTERNALS = [
  '_finishFetch',
  '_setExisted',
  '_getSaveJSON',
  '_handleSaveResponse',
] as const;

type AnyRecord = Record<string, unknown>;

/**
 * True for a class that extends the Parse JS SDK's `Parse.Object` (directly or through
 * `Parse.User`, `Parse.Role`, another model, ...). Detected by shape, whichever copy of the SDK
 * the class comes from.
 */
export function isParseObjectModel(model: ModelClass): boolean {
  const prototype = (model as { prototype?: unknown }).prototype;
  if (!prototype || typeof prototype !== 'object') return false;
  const statics = model as unknown as AnyRecord;
  return (
    SDK_SHAPE.every((m) => typeof (prototype as AnyRecord)[m] === 'function') &&
    SDK_STATICS.every((m) => typeof statics[m] === 'function')
  );
}

/**
 * Fails at start-up when an SDK model comes from an SDK without the internals agent methods need
 * (a version this library does not know), rather than at the first call.
 */
export function checkSdkInternals(model: ModelClass): void {
  const prototype = (model as { prototype: AnyRecord }).prototype;
  const missing = SDK_INTERNALS.filter((m) => typeof prototype[m] !== 'function');
  if (missing.length) {
    throw new ParseAgentConfigError(
      `Model ${model.name} extends Parse.Object, but its Parse JS SDK lacks ${missing.join(', ')}, which agent methods need to build an instance from a row. Use the parse package 5 or later, or declare the model as a plain class.`,
    );
  }
}

/**
 * The Parse class an SDK model maps to: the className its instances carry (what the subclass
 * passes to super()), else the one `Parse.Object.registerSubclass` recorded on the class.
 * Undefined when neither says. `declared` is the @ParseClass name, when there is one: it must
 * agree, or the SDK would save the model's objects to another class than agents read.
 */
export function sdkModelClassName(model: ModelClass, declared?: string): string | undefined {
  let instance: ParseSdkObject | undefined;
  try {
    instance = new (model as unknown as new () => ParseSdkObject)();
  } catch (error) {
    if (declared) return undefined;
    throw new ParseAgentConfigError(
      `Model ${model.name} extends Parse.Object, but constructing it without arguments to read its Parse class name failed (${(error as Error).message}). Name the class with @ParseClass('Name').`,
    );
  }
  const registered = (model as unknown as { className?: unknown }).className;
  const derived =
    typeof instance.className === 'string' && instance.className
      ? instance.className
      : typeof registered === 'string' && registered
        ? registered
        : undefined;
  if (declared && derived && derived !== declared) {
    throw new ParseAgentConfigError(
      `Model ${model.name} is declared @ParseClass('${declared}') but its Parse.Object instances have className '${derived}'. Make them agree: pass '${declared}' to super(), or drop @ParseClass.`,
    );
  }
  return derived;
}
