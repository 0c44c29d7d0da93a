import {
  AccessDeniedError,
  AgentValidationError,
  ParseAgentConfigError,
} from '../../../core/errors';
import type { ModelClass } from '../../../metadata/metadata.types';
import { isParseObjectModel, type ParseSdkObject } from '../../../metadata/parse-object-model';
import type { DataPath, DataRow } from '../../../ports/data-path';
import { isPlainObject } from '../../../core/plain-object';
import { writeOperation } from '../../write/write-path';

export interface SdkMethodTargetOptions {
  className: string;
  /** `Class.method`, for messages. */
  qualified: string;
  /** The row the agent read, already cut to what it may see. */
  row: DataRow;
  /** The method's data path (`ctx.data`): records writes, refuses them in a preview. */
  data: DataPath;
  signal: AbortSignal;
}

/** SDK calls that would reach Parse with the application's own credentials, not the agent's. */
const APP_IDENTITY_CALLS: Record<string, string> = {
  fetch:
    "The object was loaded through the agent's read policy when the method started; read anything else with ctx.data.",
  fetchWithInclude: "Read related objects with ctx.data, so the agent's read policy applies.",
  saveEventually: "Use this.save(), which writes with the agent's identity.",
  destroyEventually: "Use this.destroy(), which deletes with the agent's identity.",
  // The SDK's own save path (Parse.Object.saveAll, a cascade from another object): refused, so
  // nothing can save this object with the application's credentials.
  _getSaveParams: "Save it with this.save(), which writes with the agent's identity.",
};

function refuseCredentialOptions(qualified: string, call: string, options: unknown): void {
  if (!isPlainObject(options)) return;
  const named = ['useMasterKey', 'sessionToken'].filter((k) => options[k] !== undefined);
  if (named.length) {
    throw new AccessDeniedError(
      `'${qualified}' passed ${named.join(' and ')} to ${call}: in an agent method, writes always run with the agent's own identity. Remove the option.`,
    );
  }
}

/**
 * Refuses, on the objects a method receives, every SDK call that would reach Parse with the
 * application's credentials (set with Parse.initialize, possibly the master key) instead of the
 * agent's. Keeps the first refusal: the SDK wraps errors thrown inside its own save path (saveAll)
 * in a ParseError of its own, and the caller reports this one instead.
 */
class AppIdentityGuard {
  first?: ParseAgentConfigError;
  private readonly seen = new Set<unknown>();

  constructor(private readonly qualified: string) {}

  private refuse(name: string, message: string): void {
    const error = new ParseAgentConfigError(`'${this.qualified}' called ${name}() on ${message}`);
    this.first ??= error;
    throw error;
  }

  private replace(object: object, name: string, message: string): void {
    Object.defineProperty(object, name, {
      configurable: true,
      writable: true,
      value: () => this.refuse(name, message),
    });
  }

  /** The method's own object: its save() and destroy() are replaced by the caller. */
  own(object: object): void {
    this.seen.add(object);
    for (const [name, hint] of Object.entries(APP_IDENTITY_CALLS)) {
      this.replace(
        object,
        name,
        `its object, which would reach Parse with the application's own credentials rather than the agent's. ${hint}`,
      );
    }
  }

  /** The SDK objects a row's values decode to (pointers, nested objects): no SDK I/O at all. */
  nested(value: unknown): void {
    if (!value || typeof value !== 'object' || this.seen.has(value)) return;
    this.seen.add(value);
    const candidate = value as { constructor?: ModelClass; className?: unknown; id?: unknown };
    if (candidate.constructor && isParseObjectModel(candidate.constructor)) {
      const owner = `${String(candidate.className)}#${String(candidate.id)}`;
      for (const name of [...Object.keys(APP_IDENTITY_CALLS), 'save', 'destroy']) {
        this.replace(
          value,
          name,
          `${owner}, an object reached through a field, which would reach Parse with the application's own credentials rather than the agent's. Read or write it with ctx.data, which uses the agent's identity.`,
        );
      }
      return;
    }
    for (const item of Array.isArray(value) ? value : Object.values(value)) this.nested(item);
  }
}

export interface SdkMethodTarget {
  /** The model instance the method runs on. */
  object: object;
  /** The first SDK call the method was refused, if any: the reason to report when it failed. */
  refusal(): Error | undefined;
}

/**
 * The `this` of an instance method on a Parse.Object subclass: a real instance of the model built
 * from the row the agent read (only those fields, nothing fetched again), so `this.get(...)`,
 * accessors and the model's own helpers work. Its `save()` and `destroy()` go through the method's
 * data path, with the agent's identity: a session agent never writes with the master key, the
 * audit records the written keys, and a preview refuses the write. Calls that would use the
 * application's SDK credentials are refused.
 */
export function sdkMethodTarget(
  model: ModelClass,
  options: SdkMethodTargetOptions,
): SdkMethodTarget {
  const { className, qualified, row, data, signal } = options;
  const Model = model as unknown as new (className: string) => ParseSdkObject;
  // As the SDK's own fromJSON builds a registered subclass: construct, then load server data.
  const object = new Model(className);
  if (object.className !== className) {
    throw new ParseAgentConfigError(
      `Model ${model.name} builds objects of class '${String(object.className)}', but is registered for '${className}'. Pass '${className}' to super() or name the class with @ParseClass.`,
    );
  }
  const serverData: Record<string, unknown> = { ...row };
  delete serverData.className;
  delete serverData.__type;
  object._finishFetch(serverData);
  object._setExisted(true);
  // In the SDK's single-instance mode, objects of one class and id share their state: this one
  // would then carry fields the application loaded, beyond what the agent may read. Fail closed.
  const allowed = new Set([...Object.keys(serverData), 'createdAt', 'updatedAt']);
  const extra = Object.keys(object.attributes).filter((k) => !allowed.has(k));
  if (extra.length || object.dirtyKeys().length) {
    throw new ParseAgentConfigError(
      `'${qualified}' cannot run on a ${className} object: the Parse JS SDK shares object state between instances (single-instance mode), so the method would see fields the agent may not read. Call Parse.Object.disableSingleInstance() in the application.`,
    );
  }
  const objectId = object.id;
  if (!objectId) {
    throw new ParseAgentConfigError(`'${qualified}': the row read for the method has no objectId.`);
  }

  const guard = new AppIdentityGuard(qualified);
  guard.own(object);
  for (const value of Object.values(object.attributes)) guard.nested(value);

  const save = async (first?: unknown, second?: unknown, third?: unknown) => {
    // The SDK's signatures: save(key, value, options), save(attributes, options), save().
    const keyed = typeof first === 'string';
    refuseCredentialOptions(qualified, 'save()', keyed ? third : second);
    if (keyed && object.set(first, second) === false) {
      throw new AgentValidationError(`'${qualified}' could not set '${first}' before saving.`);
    }
    if (!keyed && isPlainObject(first) && object.set(first) === false) {
      throw new AgentValidationError(`'${qualified}' could not set its values before saving.`);
    }
    const changes = object._getSaveJSON();
    if (!Object.keys(changes).length) return object;
    const update = writeOperation(data, 'update');
    const response = await update.call(data, className, objectId, changes, signal);
    // The SDK's own post-save step: pending changes become the object's saved state.
    object._handleSaveResponse({ ...response }, 200);
    return object;
  };
  const destroy = async (destroyOptions?: unknown) => {
    refuseCredentialOptions(qualified, 'destroy()', destroyOptions);
    const remove = writeOperation(data, 'delete');
    await remove.call(data, className, objectId, signal);
    return object;
  };
  Object.defineProperty(object, 'save', { configurable: true, writable: true, value: save });
  Object.defineProperty(object, 'destroy', { configurable: true, writable: true, value: destroy });
  return { object, refusal: () => guard.first };
}
