import { PERMISSION_HIERARCHY, type PermissionLevel } from '../../core/constants';
import { AccessDeniedError } from '../../core/errors';
import type { DataPath } from '../../ports/data-path';
import type { ReadPolicy } from '../../security/read-policy';
import { WritePolicy } from '../../security/write-policy';
import { precheckWrite, writeOperation } from '../builtin/mutation/write-path';
import { writeToReadableObject } from '../builtin/mutation/write-refused';
import type { ConfirmationRequest, MutationAuditInput } from '../tool-context';

/** What a writer is built from: the agent's policy, its write path, and the call's hooks. */
export interface WriteSources {
  access: ReadPolicy;
  /** The write path the router picks for the agent's identity (bound on first use). */
  path(): DataPath;
  signal: AbortSignal;
  /** The calling tool, for refusals and confirmations. */
  toolName: string;
  /** The calling tool's declared tier: create and update need `write`, delete needs `admin`. */
  toolPermission: PermissionLevel;
  confirm(request: ConfirmationRequest): Promise<{ confirmed: boolean }>;
  audit(event: MutationAuditInput): void;
}

/** What a create or an update changed (field names, never values). */
export interface PolicedWrite {
  className: string;
  objectId: string;
  changedKeys: string[];
  createdAt?: string;
  updatedAt?: string;
}

/**
 * Writes at the agent's own identity under the same rules as the built-in write tools: reachable
 * classes only, allowlisted existing fields only, never Parse-managed, credential or ACL columns,
 * the tenant field forced on create and never changed, and only rows the agent's reads would
 * find. Parse (or the ACL-scoped write path) then applies the identity's ACL and CLP. Every write
 * is recorded as a mutation event; a delete asks the person first.
 *
 * A custom tool gets one as `context.write`; it holds its path in private fields, so nothing a
 * tool can reach leads back to a raw path.
 */
export class PolicedWriter {
  readonly #sources: WriteSources;
  #path?: DataPath;

  constructor(sources: WriteSources) {
    this.#sources = sources;
  }

  /** A new object; the tenant field is set to the agent's tenant. */
  async create(className: string, values: Record<string, unknown>): Promise<PolicedWrite> {
    this.#assertTier('write', 'create');
    const plan = await this.#policy().planCreate(className, values);
    const path = this.#writePath();
    const created = await writeOperation(path, 'create').call(
      path,
      className,
      plan.values,
      this.#sources.signal,
    );
    this.#sources.audit({
      action: 'create',
      class_name: className,
      object_id: created.objectId,
      changed_keys: plan.changedKeys,
    });
    return {
      className,
      objectId: created.objectId,
      createdAt: created.createdAt,
      changedKeys: plan.changedKeys,
    };
  }

  /** Changes fields of an object the agent can read; the tenant field cannot change. */
  async update(
    className: string,
    objectId: string,
    values: Record<string, unknown>,
  ): Promise<PolicedWrite> {
    this.#assertTier('write', 'update');
    const policy = this.#policy();
    const plan = await policy.planUpdate(className, values);
    const path = this.#writePath();
    await policy.assertRowWritable(path, className, objectId, this.#sources.signal);
    const updated = await writeToReadableObject(className, objectId, () =>
      writeOperation(path, 'update').call(
        path,
        className,
        objectId,
        plan.values,
        this.#sources.signal,
      ),
    );
    this.#sources.audit({
      action: 'update',
      class_name: className,
      object_id: objectId,
      changed_keys: plan.changedKeys,
    });
    return { className, objectId, updatedAt: updated.updatedAt, changedKeys: plan.changedKeys };
  }

  /** Deletes an object the agent can read, after the person confirms (see `confirmationRequired`). */
  async delete(className: string, objectId: string): Promise<void> {
    this.#assertTier('admin', 'delete');
    const path = this.#writePath();
    const { signal } = this.#sources;
    await this.#policy().assertRowWritable(path, className, objectId, signal);
    await precheckWrite(path, 'delete', className, objectId, signal);
    await this.#sources.confirm({
      message: `Delete ${className} ${objectId}? This cannot be undone.`,
      tool: this.#sources.toolName,
      className,
      objectId,
    });
    await writeToReadableObject(className, objectId, () =>
      writeOperation(path, 'delete').call(path, className, objectId, signal),
    );
    this.#sources.audit({
      action: 'delete',
      class_name: className,
      object_id: objectId,
      changed_keys: [],
    });
  }

  #policy(): WritePolicy {
    return new WritePolicy(this.#sources.access);
  }

  #writePath(): DataPath {
    return (this.#path ??= this.#sources.path());
  }

  /** A tool writes only as far as its own declared tier reaches (a readonly tool never writes). */
  #assertTier(needed: PermissionLevel, action: string): void {
    const { toolName, toolPermission } = this.#sources;
    if (PERMISSION_HIERARCHY[toolPermission] >= PERMISSION_HIERARCHY[needed]) return;
    throw new AccessDeniedError(
      `Tool '${toolName}' is declared ${toolPermission} and cannot ${action} through context.write; register it with permission: '${needed}' (agents then need that tier to call it).`,
    );
  }
}
