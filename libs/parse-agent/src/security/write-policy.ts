import { OBJECT_ID_PATTERN } from '../core/constants';
import { AccessDeniedError, AgentValidationError, ObjectNotFoundError } from '../core/errors';
import type { DataPath, DataRow } from '../ports/data-path';
import { fieldSpellings } from '../query/field-names';
import { isPlainObject } from '../core/plain-object';
import { isInternalField } from '../query/internal-fields';
import { checkPointerWrite } from '../query/constraint-translator';
import { andWhere } from '../query/where-composer';
import type { ReadPolicy } from './read-policy';
import { rowInTenant, type ResolvedTenant } from './tenant-scope';
import { checkEntityRules } from '../validation/entity-rules';

/** Most fields one write may set (a guard against a model dumping a whole document). */
export const MAX_WRITE_FIELDS = 64;

/** Columns Parse manages or that grant access: no agent sets them, whatever the allowlist says. */
const NEVER_WRITABLE = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL', 'authData']);
const WRITE_FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,127}$/;

export interface PlannedWrite {
  /** The values to send: checked, with the tenant field forced on create. */
  values: DataRow;
  /** Names of the fields the caller changes (for the audit event; never values). */
  changedKeys: string[];
  tenant?: ResolvedTenant;
}

/**
 * What an agent may change, on top of Parse's own ACL/CLP (which the session-bound write path gets
 * enforced by Parse Server): reachable classes only, allowlisted existing fields only, never
 * Parse-managed, credential or access-control columns, the tenant field forced to the agent's
 * tenant on create and never changed, and rows only where the agent's reads would find them.
 */
export class WritePolicy {
  constructor(readonly read: ReadPolicy) {}

  /** Checks the values of a new object and forces its tenant. */
  async planCreate(className: string, values: unknown): Promise<PlannedWrite> {
    await this.read.requireReadableClass(className);
    const checked = await this.checkValues(className, values, 'create');
    const tenant = this.read.tenant(className);
    if (tenant) {
      this.assertTenantValue(className, checked, tenant);
      for (const name of fieldSpellings(tenant.field)) delete checked[name];
      checked[tenant.field] = tenant.value;
    }
    await this.checkRules(className, checked, 'create');
    return { values: checked, changedKeys: Object.keys(checked).sort(), tenant };
  }

  /** Checks an update; the tenant field may only be repeated with its current value (then dropped). */
  async planUpdate(className: string, values: unknown): Promise<PlannedWrite> {
    await this.read.requireReadableClass(className);
    const checked = await this.checkValues(className, values, 'update');
    const tenant = this.read.tenant(className);
    if (tenant) {
      this.assertTenantValue(className, checked, tenant);
      for (const name of fieldSpellings(tenant.field)) delete checked[name];
    }
    if (!Object.keys(checked).length) {
      throw new AgentValidationError(
        'values must name at least one field to change (the tenant field cannot be changed).',
      );
    }
    await this.checkRules(className, checked, 'update');
    return { values: checked, changedKeys: Object.keys(checked).sort(), tenant };
  }

  /**
   * Fetches the row an update or delete targets the way a read would (class gate, tenant scope,
   * per-agent filters, canonical filter), so an agent can only change rows it can see. A row of
   * another tenant, filtered out, or missing answers the same "not found".
   */
  async assertRowWritable(
    data: DataPath,
    className: string,
    objectId: unknown,
    signal?: AbortSignal,
  ): Promise<DataRow> {
    await this.read.requireReadableClass(className);
    if (typeof objectId !== 'string' || !OBJECT_ID_PATTERN.test(objectId)) {
      throw new AgentValidationError(
        `object_id ${JSON.stringify(objectId)} is not a valid objectId.`,
      );
    }
    const { where, tenant } = await this.read.planWhere(className, {}, true, true);
    const rows = await data.find(
      className,
      { where: andWhere(where, { objectId }), keys: ['objectId'], limit: 1 },
      signal,
    );
    const row = rows[0];
    if (!row || (tenant && tenant.field in row && !rowInTenant(row, tenant))) {
      throw new ObjectNotFoundError(className, objectId);
    }
    return row;
  }

  /** The model's class-validator rules: all of them on create, the sent fields' on update. */
  protected async checkRules(
    className: string,
    values: DataRow,
    mode: 'create' | 'update',
  ): Promise<void> {
    const meta = this.read.meta(className);
    await checkEntityRules(className, meta?.model, values, meta?.propertyToWire ?? {}, mode);
  }

  protected assertTenantValue(className: string, values: DataRow, tenant: ResolvedTenant): void {
    for (const name of fieldSpellings(tenant.field)) {
      if (name in values && values[name] !== tenant.value) {
        throw new AccessDeniedError(
          `Tenant scope conflict: '${tenant.field}' of class '${className}' is set from the agent's tenant and cannot be written.`,
          { kind: 'tenant_scope', deniedField: name },
        );
      }
    }
  }

  protected async checkValues(
    className: string,
    values: unknown,
    mode: 'create' | 'update',
  ): Promise<DataRow> {
    if (!isPlainObject(values)) {
      throw new AgentValidationError('values must be an object of { field: value }.');
    }
    const keys = Object.keys(values);
    if (mode === 'update' && !keys.length) {
      throw new AgentValidationError('values must name at least one field to change.');
    }
    if (keys.length > MAX_WRITE_FIELDS) {
      throw new AgentValidationError(`values may set at most ${MAX_WRITE_FIELDS} fields.`);
    }
    const schema = await this.read.schema(className);
    if (!schema) {
      throw new AgentValidationError(
        `Class '${className}' does not exist; objects can only be written to existing classes.`,
      );
    }
    const allowed = this.read.meta(className)?.fields;
    const tenantNames = new Set(
      this.read.meta(className)?.tenantScope
        ? fieldSpellings(this.read.meta(className)!.tenantScope!.field)
        : [],
    );
    const out: DataRow = {};
    for (const key of keys) {
      if (NEVER_WRITABLE.has(key) || isInternalField(key) || key.startsWith('_')) {
        throw new AccessDeniedError(
          `values: '${key}' is managed by Parse or controls access and is never writable by an agent.`,
          { kind: 'internal_field', deniedField: key },
        );
      }
      if (!WRITE_FIELD_NAME.test(key)) {
        throw new AgentValidationError(
          `values: '${key}' is not a field name (letters, digits, underscores; no dotted paths).`,
        );
      }
      // The tenant field is checked against the agent's tenant by the caller, not the allowlist.
      if (!tenantNames.has(key)) {
        if (allowed && !allowed.includes(key)) {
          throw new AccessDeniedError(
            `values: field '${key}' is outside the agent_fields allowlist of '${className}'. Allowed: ${allowed.filter((f) => !NEVER_WRITABLE.has(f)).join(', ')}`,
            { kind: 'field_denied', deniedField: key },
          );
        }
        if (!(key in schema.fields)) {
          throw new AgentValidationError(
            `values: '${className}' has no field '${key}'. Agents write existing fields only; add the column through the schema first.`,
          );
        }
      }
      this.checkValue(key, values[key]);
      const type = schema.fields[key];
      if (type?.type === 'Pointer' && type.targetClass) {
        const target = type.targetClass;
        checkPointerWrite(key, values[key], target, this.read.isDenied(target));
      }
      out[key] = values[key];
    }
    return out;
  }

  /** Pointers and relation operations may not reach classes the agent cannot see. */
  protected checkValue(key: string, value: unknown, depth = 0): void {
    if (depth > 8) throw new AgentValidationError(`values: '${key}' is nested too deeply.`);
    if (Array.isArray(value)) {
      for (const item of value) this.checkValue(key, item, depth + 1);
      return;
    }
    if (!isPlainObject(value)) return;
    if (typeof value.className === 'string' && value.__type !== undefined) {
      if (this.read.isDenied(value.className)) {
        throw new AccessDeniedError(
          `values: '${key}' points to class '${value.className}', which is not accessible to this agent.`,
          { kind: 'hidden_class', deniedField: key },
        );
      }
    }
    for (const nested of Object.values(value)) this.checkValue(key, nested, depth + 1);
  }
}
