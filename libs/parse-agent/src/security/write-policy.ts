import { CLASS_NAME_PATTERN } from '../core/constants';
import { AccessDeniedError, AgentValidationError } from '../core/errors';
import type { DataClassSpec, DataRow } from '../ports/data-path';
import { fieldSpellings } from '../query/field-names';
import { isPlainObject } from '../core/plain-object';
import { isInternalField } from '../query/internal-fields';
import { checkPointerWrite } from '../query/constraint-translator';
import type { ReadPolicy } from './read-policy';
import type { ResolvedTenant } from './tenant-scope';
import { checkEntityRules } from '../validation/entity-rules';

/** Most fields one write may set (a guard against a model dumping a whole document). */
export const MAX_WRITE_FIELDS = 64;

/** Columns Parse manages or that grant access: no agent sets them, whatever the allowlist says. */
const NEVER_WRITABLE = new Set(['objectId', 'createdAt', 'updatedAt', 'ACL', 'authData']);
const WRITE_FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]{0,127}$/;

/** The field types a new class may declare (Parse's). */
export const CLASS_FIELD_TYPES: readonly string[] = [
  'String',
  'Number',
  'Boolean',
  'Date',
  'Object',
  'Array',
  'GeoPoint',
  'File',
  'Pointer',
  'Relation',
  'Polygon',
];

/** A checked new class: what the path is sent, and the field names for the audit. */
export interface PlannedClass {
  spec: DataClassSpec;
  fieldNames: string[];
}

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
 * tenant on create and never changed, and schema changes that keep to the agent's classes. The
 * policed writer (tools/write/) runs these plans, then checks that an updated or deleted row is
 * one the agent's reads find.
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
   * The row half of a create, for writes whose fields are the application's choice (an agent
   * method's `ctx.data`): the class gate and the tenant field forced to the agent's tenant, no
   * field rules.
   */
  async scopeCreate(className: string, values: unknown): Promise<PlannedWrite> {
    await this.read.requireReadableClass(className);
    const checked = this.plainValues(values);
    const tenant = this.read.tenant(className);
    if (tenant) {
      this.assertTenantValue(className, checked, tenant);
      for (const name of fieldSpellings(tenant.field)) delete checked[name];
      checked[tenant.field] = tenant.value;
    }
    return { values: checked, changedKeys: Object.keys(checked).sort(), tenant };
  }

  /** The row half of an update (see scopeCreate): the class gate; the tenant field never changes. */
  async scopeUpdate(className: string, values: unknown): Promise<PlannedWrite> {
    await this.read.requireReadableClass(className);
    const checked = this.plainValues(values);
    const tenant = this.read.tenant(className);
    if (tenant) this.assertTenantValue(className, checked, tenant);
    return { values: checked, changedKeys: Object.keys(checked).sort(), tenant };
  }

  /**
   * A new class: a valid name that is not a system class and does not exist yet, reachable by
   * the agent; fields with valid names and types, Pointer and Relation fields naming a target
   * class the agent can see (and only those).
   */
  async planCreateClass(className: string, fields: unknown): Promise<PlannedClass> {
    if (!CLASS_NAME_PATTERN.test(className) || className.startsWith('_')) {
      throw new AgentValidationError(
        `'${className}' is not a valid new class name (letters, digits, underscores; no leading underscore).`,
      );
    }
    this.read.assertClassAccessible(className);
    if (await this.read.schema(className)) {
      throw new AgentValidationError(`Class '${className}' already exists.`);
    }
    if (!isPlainObject(fields)) throw new AgentValidationError('fields must be an object.');
    const spec: DataClassSpec['fields'] = {};
    for (const [name, field] of Object.entries(fields)) {
      if (!WRITE_FIELD_NAME.test(name) || NEVER_WRITABLE.has(name)) {
        throw new AgentValidationError(`fields: '${name}' is not a field name you can declare.`);
      }
      if (!isPlainObject(field) || !CLASS_FIELD_TYPES.includes(field.type as string)) {
        throw new AgentValidationError(
          `fields.${name}: type must be one of ${CLASS_FIELD_TYPES.join(', ')}.`,
        );
      }
      const type = field.type as string;
      const target = field.target_class;
      const needsTarget = type === 'Pointer' || type === 'Relation';
      if (needsTarget !== (target !== undefined) || (needsTarget && typeof target !== 'string')) {
        throw new AgentValidationError(
          `fields.${name}: target_class is required for Pointer and Relation fields, and only for them.`,
        );
      }
      if (typeof target === 'string' && this.read.isDenied(target)) {
        throw new AccessDeniedError(
          `fields.${name} points to '${target}', which is not accessible to this agent.`,
          { kind: 'hidden_class', deniedField: name },
        );
      }
      spec[name] = typeof target === 'string' ? { type, targetClass: target } : { type };
    }
    return { spec: { fields: spec }, fieldNames: Object.keys(spec) };
  }

  /** A class to delete: reachable, not a system class, declared by no model, existing. */
  async planDeleteClass(className: string): Promise<void> {
    await this.read.requireReadableClass(className);
    if (className.startsWith('_')) {
      throw new AgentValidationError(
        `'${className}' is a Parse system class and cannot be deleted.`,
      );
    }
    if (this.read.meta(className)) {
      throw new AgentValidationError(
        `'${className}' is declared by a model of this application; remove the model before deleting its class.`,
      );
    }
    if (!(await this.read.schema(className))) {
      throw new AgentValidationError(`Class '${className}' does not exist.`);
    }
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

  /** A copy of the values, refused unless they are an object of at most MAX_WRITE_FIELDS fields. */
  protected plainValues(values: unknown): DataRow {
    if (!isPlainObject(values)) {
      throw new AgentValidationError('values must be an object of { field: value }.');
    }
    if (Object.keys(values).length > MAX_WRITE_FIELDS) {
      throw new AgentValidationError(`values may set at most ${MAX_WRITE_FIELDS} fields.`);
    }
    return { ...values };
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
