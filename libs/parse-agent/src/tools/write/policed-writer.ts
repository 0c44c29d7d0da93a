import { OBJECT_ID_PATTERN, tierReaches, type PermissionLevel } from '../../core/constants';
import { AccessDeniedError, AgentValidationError, ObjectNotFoundError } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import type { DataClassSpec, DataCreateResult, DataPath } from '../../ports/data-path';
import type { ReadPolicy } from '../../security/read-policy';
import { WritePolicy, type PlannedWrite } from '../../security/write-policy';
import type { PolicedReader } from '../read/policed-reader';
import type { ConfirmationRequest, MutationAuditInput } from '../tool-context';
import { methodDataPath, methodWrite, writtenKeys, type MethodWrite } from './method-data-path';
import {
  confirmationFor,
  STEP_TIER,
  type ToolConfirmation,
  type WriteStep,
  type WriteTarget,
} from './write-confirmation';
import { precheckWrite, writeOperation } from './write-path';
import { writeToReadableObject } from './write-refused';

/** What a writer is built from: the agent's policy and reader, its write path, the call's hooks. */
export interface WriteSources {
  access: ReadPolicy;
  /** The agent's reader: row checks are planned reads (tenant, filters, canonical filter). */
  read: PolicedReader;
  /** The write path the router picks for the agent's identity (bound on first use). */
  path(): DataPath;
  signal: AbortSignal;
  /** The calling tool, for refusals and confirmations. */
  toolName: string;
  /** The calling tool's declared tier: a write needing more is refused (see STEP_TIER). */
  toolPermission: PermissionLevel;
  /** The tool's declared confirmation (`ToolDefinition.confirm`): which writes ask a person. */
  confirmation?: ToolConfirmation;
  confirm(request: ConfirmationRequest): Promise<{ confirmed: boolean }>;
  audit(event: MutationAuditInput): void;
  /** Set for a preview or a readonly method: every write is refused with this reason. */
  refusal?: string;
}

/** What a create, an update or a delete changed (field names, never values). */
export interface PolicedWrite {
  className: string;
  objectId: string;
  changedKeys: string[];
  createdAt?: string;
  updatedAt?: string;
}

/** A class created or deleted. */
export interface PolicedClassChange {
  className: string;
  /** The fields a new class declares (empty for a deletion). */
  fields: string[];
}

/** An agent method about to run as one write step (call_method). */
export interface MethodCall {
  className: string;
  objectId?: string;
  /** `Class.method`. */
  qualified: string;
  /** The method's declared tier. */
  permission: PermissionLevel;
  /** A preview: nothing may be written. */
  dryRun: boolean;
}

/** What an agent method writes with: `ctx.data` and `ctx.write`, both recorded for its event. */
export interface MethodSession {
  data: DataPath;
  write: PolicedWriter;
}

/**
 * Field rules: `full` for what a model sends (WritePolicy's allowlist, internal columns, entity
 * rules), `rows` for an agent method's `ctx.data`, whose fields are the application's choice.
 */
type Checks = 'full' | 'rows';

/**
 * Every write an agent makes, in one order: the plan (WritePolicy: class, fields, tenant), the
 * row check (an updated or deleted row must be one the agent's reads find: tenant, filters,
 * canonical filter), the path's own checks and the confirmation when the tool's declaration asks
 * for this write, the write (with Parse's "not found" re-told for a row the agent can read), and
 * the audit event (field names only). Parse (or the ACL-scoped write path) then applies the
 * identity's ACL and CLP, and the write path refuses pointers to rows the agent cannot read.
 *
 * Built-in write tools, application tools and agent methods get one; it holds its path in private
 * fields, so nothing a tool can reach leads back to a raw path.
 */
export class PolicedWriter {
  readonly #sources: WriteSources;
  #path?: DataPath;

  constructor(sources: WriteSources) {
    this.#sources = sources;
  }

  /** A new object; the tenant field is set to the agent's tenant. */
  async create(className: string, values: Record<string, unknown>): Promise<PolicedWrite> {
    return (await this.#create(className, values, 'full')).write;
  }

  /** Changes fields of an object the agent can read; the tenant field cannot change. */
  async update(
    className: string,
    objectId: string,
    values: Record<string, unknown>,
  ): Promise<PolicedWrite> {
    return (await this.#update(className, objectId, values, 'full')).write;
  }

  /** Deletes an object the agent can read (tools ask the person first: see `confirm`). */
  delete(className: string, objectId: string): Promise<PolicedWrite> {
    return this.#delete(className, objectId);
  }

  /** A new class with typed fields: `{ name: { type, target_class? } }` (see create_class). */
  async createClass(className: string, fields: unknown): Promise<PolicedClassChange> {
    const target = this.#target('create_class', className);
    const plan = await this.#policy().planCreateClass(className, fields);
    await this.#ask(target);
    const path = this.#writePath();
    await writeOperation(path, 'createClass').call(path, className, plan.spec, this.#signal);
    this.#sources.access.schemasChanged();
    this.#sources.audit({
      action: 'create_class',
      class_name: className,
      changed_keys: plan.fieldNames,
    });
    return { className, fields: plan.fieldNames };
  }

  /** Deletes an empty class the agent can see and no model declares. */
  async deleteClass(className: string): Promise<PolicedClassChange> {
    const target = this.#target('delete_class', className);
    await this.#policy().planDeleteClass(className);
    await this.#ask(target);
    const path = this.#writePath();
    await writeOperation(path, 'deleteClass').call(path, className, this.#signal);
    this.#sources.access.schemasChanged();
    this.#sources.audit({ action: 'delete_class', class_name: className, changed_keys: [] });
    return { className, fields: [] };
  }

  /**
   * Runs an agent method as one write step: the confirmation when the tool declares one for it
   * (not for a preview), then the method with a `ctx.data` and `ctx.write` whose writes are
   * checked and recorded (refused in a preview or a readonly method), then one `call_method`
   * event naming them, also when the method failed after writing. (call_method's step.)
   *
   * @internal
   */
  async method<T>(call: MethodCall, run: (session: MethodSession) => Promise<T>): Promise<T> {
    const { className, objectId, qualified, permission, dryRun } = call;
    if (!dryRun) {
      await this.#ask({ step: 'method', className, objectId, method: qualified, tier: permission });
    }
    const writes: MethodWrite[] = [];
    const writer = new PolicedWriter({
      ...this.#sources,
      // The method's tier was checked before it ran: what it writes is its author's decision.
      toolPermission: 'admin',
      confirmation: undefined,
      refusal: dryRun
        ? `'${qualified}' was called with dry_run: true and may not write`
        : permission === 'readonly'
          ? `'${qualified}' is a readonly method and may not write`
          : this.#sources.refusal,
      audit: (event) => {
        const write = methodWrite(event);
        if (write) writes.push(write);
      },
    });
    // Bound here: a method's writes reach the writer's private steps, nothing else does.
    const data = methodDataPath(this.#sources.read, {
      // The path's own answers: an SDK model's save() takes Parse's back (an increment's result).
      create: async (c, values) => (await writer.#create(c, values, 'rows')).answer,
      update: async (c, id, values) => (await writer.#update(c, id, values, 'rows')).answer,
      delete: (c, id) => writer.#delete(c, id).then(() => undefined),
      createClass: (c, spec) => writer.createClass(c, wireFields(spec)).then(() => undefined),
      deleteClass: (c) => writer.deleteClass(c).then(() => undefined),
    });
    const audit = (failed: boolean) =>
      this.#sources.audit({
        action: 'call_method',
        class_name: className,
        object_id: objectId,
        method: qualified,
        changed_keys: writtenKeys(writes),
        ...(writes.length ? { writes } : {}),
        ...(failed ? { failed: true as const } : {}),
      });
    let result: T;
    try {
      result = await run({ data, write: writer });
    } catch (error) {
      // A write that happened is audited even when the method failed afterwards.
      if (writes.length) audit(true);
      throw error;
    }
    if (!dryRun && permission !== 'readonly') audit(false);
    return result;
  }

  async #create(
    className: string,
    values: unknown,
    checks: Checks,
  ): Promise<{ write: PolicedWrite; answer: DataCreateResult }> {
    const target = this.#target('create', className);
    const plan = await this.#plan(checks, 'create', className, values);
    await this.#ask(target, (path) =>
      precheckWrite(path, 'create', className, undefined, this.#signal),
    );
    const path = this.#writePath();
    const created = await writeOperation(path, 'create').call(
      path,
      className,
      plan.values,
      this.#signal,
    );
    this.#sources.audit({
      action: 'create',
      class_name: className,
      object_id: created.objectId,
      changed_keys: plan.changedKeys,
    });
    const write = {
      className,
      objectId: created.objectId,
      createdAt: created.createdAt,
      changedKeys: plan.changedKeys,
    };
    // Only what a create answers (an over-answering path adds nothing the method could pass on).
    const answer = {
      objectId: created.objectId,
      ...(created.createdAt ? { createdAt: created.createdAt } : {}),
    };
    return { write, answer };
  }

  async #update(
    className: string,
    objectId: unknown,
    values: unknown,
    checks: Checks,
  ): Promise<{ write: PolicedWrite; answer: { updatedAt?: string } }> {
    this.#target('update', className);
    const plan = await this.#plan(checks, 'update', className, values);
    const id = await this.#rowCheck(className, objectId);
    await this.#ask(this.#target('update', className, id), (path) =>
      precheckWrite(path, 'update', className, id, this.#signal),
    );
    const path = this.#writePath();
    const updated = await writeToReadableObject(className, id, () =>
      writeOperation(path, 'update').call(path, className, id, plan.values, this.#signal),
    );
    this.#sources.audit({
      action: 'update',
      class_name: className,
      object_id: id,
      changed_keys: plan.changedKeys,
    });
    const write = {
      className,
      objectId: id,
      updatedAt: updated.updatedAt,
      changedKeys: plan.changedKeys,
    };
    // Parse's answer about the fields written (an increment's new value), and nothing else.
    const answer: Record<string, unknown> = {};
    if (updated.updatedAt) answer.updatedAt = updated.updatedAt;
    for (const key of plan.changedKeys) {
      if (Object.hasOwn(updated, key)) answer[key] = (updated as Record<string, unknown>)[key];
    }
    return { write, answer };
  }

  async #delete(className: string, objectId: unknown): Promise<PolicedWrite> {
    this.#target('delete', className);
    const id = await this.#rowCheck(className, objectId);
    await this.#ask(this.#target('delete', className, id), (path) =>
      precheckWrite(path, 'delete', className, id, this.#signal),
    );
    const path = this.#writePath();
    await writeToReadableObject(className, id, () =>
      writeOperation(path, 'delete').call(path, className, id, this.#signal),
    );
    this.#sources.audit({
      action: 'delete',
      class_name: className,
      object_id: id,
      changed_keys: [],
    });
    return { className, objectId: id, changedKeys: [] };
  }

  /**
   * A write step about to be planned: refused outright in a preview or a readonly method, and
   * when it needs a higher tier than the calling tool declares (a readonly tool never writes).
   */
  #target(step: Exclude<WriteStep, 'method'>, className: string, objectId?: string): WriteTarget {
    const { refusal, toolName, toolPermission } = this.#sources;
    if (refusal !== undefined) {
      throw new AccessDeniedError(`${refusal} (it tried ${step} on '${String(className)}').`);
    }
    const tier = STEP_TIER[step];
    if (!tierReaches(toolPermission, tier)) {
      throw new AccessDeniedError(
        `Tool '${toolName}' is declared ${toolPermission} and cannot ${step.replace('_', ' ')} through context.write; register it with permission: '${tier}' (agents then need that tier to call it).`,
      );
    }
    return { step, className, ...(objectId !== undefined ? { objectId } : {}), tier };
  }

  #plan(
    checks: Checks,
    mode: 'create' | 'update',
    className: string,
    values: unknown,
  ): Promise<PlannedWrite> {
    const policy = this.#policy();
    if (checks === 'rows') {
      return mode === 'create'
        ? policy.scopeCreate(className, values)
        : policy.scopeUpdate(className, values);
    }
    return mode === 'create'
      ? policy.planCreate(className, values)
      : policy.planUpdate(className, values);
  }

  /**
   * The row an update or delete targets must be one a read by this agent finds (class gate,
   * tenant scope, filters, canonical filter): another tenant's row, a filtered-out one and a
   * missing one all answer "not found".
   */
  async #rowCheck(className: string, objectId: unknown): Promise<string> {
    const { read } = this.#sources;
    await read.gate(className);
    if (typeof objectId !== 'string' || !OBJECT_ID_PATTERN.test(objectId)) {
      throw new AgentValidationError(
        `object_id ${JSON.stringify(objectId)} is not a valid objectId.`,
      );
    }
    if (!(await read.reaches(className, objectId))) {
      throw new ObjectNotFoundError(className, objectId);
    }
    return objectId;
  }

  /**
   * The confirmation, when the tool's declaration asks for this write: first the path's own
   * checks (an aclUser/aclRole agent's CLP and row ACL), so nobody confirms a write that would be
   * refused; then the question. A write nobody is asked about is checked by its path as it runs.
   */
  async #ask(target: WriteTarget, precheck?: (path: DataPath) => Promise<void>): Promise<void> {
    const message = confirmationFor(target, [this.#sources.confirmation]);
    if (!message) return;
    if (precheck) await precheck(this.#writePath());
    await this.#sources.confirm({
      message,
      tool: this.#sources.toolName,
      className: target.className,
      objectId: target.objectId,
    });
  }

  get #signal(): AbortSignal {
    return this.#sources.signal;
  }

  #policy(): WritePolicy {
    return new WritePolicy(this.#sources.access);
  }

  #writePath(): DataPath {
    return (this.#path ??= this.#sources.path());
  }
}

/** A `DataPath` class spec in create_class's form (`target_class`), for the same checks. */
function wireFields(spec: unknown): unknown {
  const fields = (spec as Partial<DataClassSpec> | undefined)?.fields;
  if (!isPlainObject(fields)) return fields;
  return Object.fromEntries(
    Object.entries(fields).map(([name, field]) => [
      name,
      isPlainObject(field) && field.targetClass !== undefined
        ? { type: field.type, target_class: field.targetClass }
        : field,
    ]),
  );
}
