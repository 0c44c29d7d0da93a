import { AccessDeniedError } from '../../../core/errors';
import type { DataPath } from '../../../ports/data-path';

/** One write an agent method made through its context's data path. */
export interface MethodWrite {
  action: 'create' | 'update' | 'delete' | 'create_class' | 'delete_class';
  class_name: string;
  object_id?: string;
  /** Names of the fields written (never values); empty for deletes and class operations. */
  changed_keys: string[];
}

export interface MethodDataPath {
  /** What the method gets as `ctx.data`. */
  path: DataPath;
  /** The writes that succeeded, in order: what the audit records. */
  readonly writes: MethodWrite[];
}

type WriteName = 'create' | 'update' | 'delete' | 'createClass' | 'deleteClass';
const WRITES: ReadonlySet<string> = new Set<WriteName>([
  'create',
  'update',
  'delete',
  'createClass',
  'deleteClass',
]);

/**
 * The data path an agent method runs with. Every write through it is recorded once it succeeded,
 * so the audit names the fields the method actually wrote (not its arguments). When `refusal` is
 * given (a dry run, a readonly method), every write is refused with it instead: a preview cannot
 * change data, whatever the method's code does.
 */
export function methodDataPath(inner: DataPath, refusal?: string): MethodDataPath {
  const writes: MethodWrite[] = [];
  const record = (name: WriteName, args: unknown[], result: unknown): void => {
    const className = String(args[0]);
    switch (name) {
      case 'create':
        writes.push({
          action: 'create',
          class_name: className,
          object_id: (result as { objectId?: string } | undefined)?.objectId,
          changed_keys: Object.keys((args[1] as object | undefined) ?? {}).sort(),
        });
        break;
      case 'update':
        writes.push({
          action: 'update',
          class_name: className,
          object_id: String(args[1]),
          changed_keys: Object.keys((args[2] as object | undefined) ?? {}).sort(),
        });
        break;
      case 'delete':
        writes.push({
          action: 'delete',
          class_name: className,
          object_id: String(args[1]),
          changed_keys: [],
        });
        break;
      case 'createClass':
        writes.push({ action: 'create_class', class_name: className, changed_keys: [] });
        break;
      case 'deleteClass':
        writes.push({ action: 'delete_class', class_name: className, changed_keys: [] });
        break;
    }
  };
  const path = new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (typeof property !== 'string' || !WRITES.has(property)) return fn.bind(target);
      const name = property as WriteName;
      return async (...args: unknown[]) => {
        if (refusal !== undefined) {
          throw new AccessDeniedError(`${refusal} (it tried ${name} on '${String(args[0])}').`);
        }
        const result = await fn.apply(target, args);
        record(name, args, result);
        return result;
      };
    },
  });
  return { path, writes };
}

/** The names of the fields a method's writes changed, sorted and without repeats. */
export function writtenKeys(writes: readonly MethodWrite[]): string[] {
  return [...new Set(writes.flatMap((w) => w.changed_keys))].sort();
}
