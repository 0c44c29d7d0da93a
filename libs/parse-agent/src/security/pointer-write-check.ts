import { AccessDeniedError, AgentValidationError, ParseRequestError } from '../core/errors';
import type { DataPath, DataRow } from '../ports/data-path';
import { isPlainObject } from '../core/plain-object';
import { andWhere } from '../query/where-composer';
import type { ReadPolicy } from './read-policy';

/** How deep a written value is searched for pointers (the write policy refuses deeper values). */
const MAX_DEPTH = 8;

/** Most objectIds one check reads at once (one `$in`). */
const IDS_PER_READ = 500;

/** Operations that only take links away: they link nothing, so their pointers are not checked. */
const UNLINKING_OPS = new Set(['Remove', 'RemoveRelation', 'Delete', 'Increment']);

/** Parse answers 119 when a class-level permission forbids the operation. */
const OPERATION_FORBIDDEN = 119;

interface WrittenPointer {
  field: string;
  className: string;
  objectId: string;
}

/**
 * Every object a write would link to: pointers set directly, in arrays, in `Add`/`AddUnique`/
 * `AddRelation` operations and inside Object fields. A value that looks like a pointer but names
 * no objectId is refused here, so nothing unchecked rides along.
 */
export function pointersWritten(values: unknown): WrittenPointer[] {
  const out: WrittenPointer[] = [];
  if (!isPlainObject(values)) return out;
  const walk = (field: string, value: unknown, depth: number): void => {
    if (depth > MAX_DEPTH) {
      throw new AgentValidationError(`values: '${field}' is nested too deeply.`);
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(field, item, depth + 1);
      return;
    }
    if (!isPlainObject(value)) return;
    if (typeof value.__op === 'string' && UNLINKING_OPS.has(value.__op)) return;
    if (value.__type === 'Pointer' || value.__type === 'Object') {
      if (typeof value.className !== 'string' || !value.className) return;
      if (typeof value.objectId !== 'string' || !value.objectId) {
        if (value.__type === 'Object') return; // a new object's JSON, not a link
        throw new AgentValidationError(
          `values: '${field}' holds a pointer to ${value.className} without an objectId.`,
        );
      }
      out.push({ field, className: value.className, objectId: value.objectId });
      return;
    }
    for (const nested of Object.values(value)) walk(field, nested, depth + 1);
  };
  for (const [field, value] of Object.entries(values)) walk(field, value, 0);
  return out;
}

/** Refusals this check raised: the library's own words, wherever they surface. */
const OWN_REFUSALS = new WeakSet<object>();

/**
 * Whether an error is this check's refusal (an agent method that hit it passes it on as the
 * library's answer, not as text of its own).
 */
export function isPointerRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && OWN_REFUSALS.has(error);
}

/** The one answer for a pointer this agent cannot read, whether the object exists or not. */
function unreadable(pointer: WrittenPointer): AccessDeniedError {
  const error = new AccessDeniedError(
    `Write refused: '${pointer.field}' points to ${pointer.className} '${pointer.objectId}', which this agent cannot read (or which does not exist). Link only objects this agent's reads return; nothing was written.`,
    { kind: 'unreadable_pointer', deniedField: pointer.field },
  );
  OWN_REFUSALS.add(error);
  return error;
}

/**
 * Refuses a write that links to an object this agent could not read: each pointed-to object must
 * be returned by a read of its class as this agent reads it (class gate, tenant scope, canonical
 * filter, the agent's filters, and on `reads` its identity's row ACL and CLP). A missing object
 * and an unreadable one get the same answer, so a write cannot be used to learn what exists.
 */
export async function assertPointersReadable(
  access: ReadPolicy,
  reads: () => DataPath,
  values: unknown,
  signal?: AbortSignal,
): Promise<void> {
  const pointers = pointersWritten(values);
  if (!pointers.length) return;
  const byClass = new Map<string, Map<string, WrittenPointer>>();
  for (const p of pointers) {
    let ids = byClass.get(p.className);
    if (!ids) byClass.set(p.className, (ids = new Map()));
    if (!ids.has(p.objectId)) ids.set(p.objectId, p);
  }
  for (const [className, ids] of byClass) {
    const first = ids.values().next().value as WrittenPointer;
    let where: Record<string, unknown>;
    try {
      if (access.isDenied(className)) throw unreadable(first);
      await access.requireReadableClass(className);
      ({ where } = await access.planWhere(className, {}, true, true));
    } catch (error) {
      if (error instanceof AccessDeniedError) throw unreadable(first);
      throw error;
    }
    const all = [...ids.keys()];
    const found = new Set<string>();
    for (let i = 0; i < all.length; i += IDS_PER_READ) {
      const slice = all.slice(i, i + IDS_PER_READ);
      let rows: DataRow[];
      try {
        rows = await reads().find(
          className,
          {
            where: andWhere(where, { objectId: { $in: slice } }),
            keys: ['objectId'],
            limit: slice.length,
          },
          signal,
        );
      } catch (error) {
        // A class this identity may not read at all (CLP) links nothing either.
        if (
          error instanceof AccessDeniedError ||
          (error instanceof ParseRequestError && error.parseCode === OPERATION_FORBIDDEN)
        ) {
          throw unreadable(first);
        }
        throw error;
      }
      for (const row of rows) if (typeof row.objectId === 'string') found.add(row.objectId);
    }
    for (const [id, pointer] of ids) if (!found.has(id)) throw unreadable(pointer);
  }
}

type CheckedWrite = 'create' | 'update';

/**
 * The agent's write path with the pointer check in front of `create` and `update`: every write a
 * tool, an agent method or an SDK model makes through it links only objects the agent can read.
 * Everything else (delete, schema changes, the path's own pre-checks) passes through unchanged.
 */
export function pointerCheckedWrites(
  inner: DataPath,
  access: ReadPolicy,
  reads: () => DataPath,
): DataPath {
  return new Proxy(inner, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (property !== 'create' && property !== 'update') return fn.bind(target);
      const method = property as CheckedWrite;
      return async (...args: unknown[]) => {
        const values = method === 'create' ? args[1] : args[2];
        const signal = (method === 'create' ? args[2] : args[3]) as AbortSignal | undefined;
        await assertPointersReadable(access, reads, values, signal);
        return fn.apply(target, args);
      };
    },
  });
}
