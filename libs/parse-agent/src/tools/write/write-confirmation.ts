import type { PermissionLevel } from '../../core/constants';

/** One kind of write the policed writer runs. `method`: an agent method, run as one step. */
export type WriteStep = 'create' | 'update' | 'delete' | 'create_class' | 'delete_class' | 'method';

/** A write about to run, as a confirmation sees it (after every check, before the write). */
export interface WriteTarget {
  step: WriteStep;
  className: string;
  objectId?: string;
  /** `Class.method`, for a `method` step. */
  method?: string;
  /** The tier the write needs: create and update `write`, the rest `admin`; a method its own. */
  tier: PermissionLevel;
}

/**
 * Which writes of a tool ask a person first, declared on the tool definition (`confirm`). The
 * policed writer asks after the plan, the row check and the path's own checks, and before the
 * write, so nobody confirms a write that would be refused.
 */
export interface ToolConfirmation {
  /** The steps that ask (`['delete']`), or a test of each write (`t => t.tier === 'admin'`). */
  asks: readonly WriteStep[] | ((target: WriteTarget) => boolean);
  /** What the person reads; the library's wording for the step when absent. */
  message?(target: WriteTarget): string;
}

/** The tier each step needs (a method's is its declared one). */
export const STEP_TIER: Readonly<Record<Exclude<WriteStep, 'method'>, PermissionLevel>> = {
  create: 'write',
  update: 'write',
  delete: 'admin',
  create_class: 'admin',
  delete_class: 'admin',
};

/** What an application's policed tool asks by default: deletes of objects and classes. */
export const DELETES_ASK: ToolConfirmation = Object.freeze({
  asks: Object.freeze(['delete', 'delete_class'] as const),
});

/** The library's question for a write, when its declaration names none. */
export function confirmationText(target: WriteTarget): string {
  const { className, objectId } = target;
  switch (target.step) {
    case 'create':
      return `Create an object in ${className}?`;
    case 'update':
      return `Change ${className} ${objectId ?? ''}?`;
    case 'delete':
      return `Delete ${className} ${objectId ?? ''}? This cannot be undone.`;
    case 'create_class':
      return `Create the class ${className} in the schema?`;
    case 'delete_class':
      return `Delete the class ${className} from the schema? This cannot be undone.`;
    case 'method':
      return `Run ${target.method ?? className}${objectId ? ` on ${objectId}` : ''}? It is ${target.tier === 'admin' ? 'an admin' : `a ${target.tier}`} action.`;
  }
}

/**
 * The one decision whether a write asks a person, and what it asks: the question of the first
 * declaration that asks for this write, or undefined when none does. Declarations are layered:
 * the tool's own comes first, and a deployment-wide one (approvals per tier, say) can be passed
 * after it without the tools changing.
 */
export function confirmationFor(
  target: WriteTarget,
  declarations: ReadonlyArray<ToolConfirmation | undefined>,
): string | undefined {
  for (const declared of declarations) {
    if (!declared) continue;
    const asks =
      typeof declared.asks === 'function'
        ? declared.asks(target)
        : declared.asks.includes(target.step);
    if (asks) return declared.message?.(target) ?? confirmationText(target);
  }
  return undefined;
}
