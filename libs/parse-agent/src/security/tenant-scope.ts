import { AccessDeniedError } from '../core/errors';
import type { ClassMetadata, TenantScopeSubject } from '../metadata/metadata.types';
import type { Where } from '../query/constraint-translator';
import { fieldSpellings } from '../query/field-names';
import { isPlainObject } from '../core/plain-object';

export interface ResolvedTenant {
  field: string;
  value: string | number;
}

/** A bypass predicate that throws never widens access. */
function bypasses(
  predicate: ((agent: TenantScopeSubject) => boolean) | undefined,
  agent: TenantScopeSubject,
): boolean {
  try {
    return predicate?.(agent) === true;
  } catch {
    return false;
  }
}

/**
 * The tenant binding for this class and agent: none when the class has no scope or the agent may
 * bypass it; a refusal when the class needs one and the agent has none (fail closed).
 */
export function resolveTenantScope(
  meta: ClassMetadata | undefined,
  agent: TenantScopeSubject,
): ResolvedTenant | undefined {
  const scope = meta?.tenantScope;
  if (!scope) return undefined;
  if (bypasses(scope.bypass, agent)) return undefined;
  const value = scope.from(agent);
  if (value === undefined || value === null || value === '') {
    throw new AccessDeniedError(
      `This agent has no tenant binding for class '${meta.className}', which requires tenant scoping.`,
      { kind: 'tenant_scope' },
    );
  }
  return { field: scope.field, value };
}

/**
 * Refuses a caller `where` that names the tenant field (either spelling, at any depth) with anything
 * but the agent's own tenant value: an agent may not query another tenant, even inside an `$or`.
 */
export function assertNoTenantSpoof(where: Where, tenant: ResolvedTenant, className: string): void {
  const names = new Set(fieldSpellings(tenant.field));
  const visit = (w: Where) => {
    for (const [key, value] of Object.entries(w)) {
      if (Array.isArray(value) && key.startsWith('$')) {
        for (const clause of value) if (isPlainObject(clause)) visit(clause);
      } else if (names.has(key.split('.')[0]) && value !== tenant.value) {
        throw new AccessDeniedError(
          `Tenant scope conflict: cannot override the '${tenant.field}' constraint for class '${className}'.`,
          { kind: 'tenant_scope' },
        );
      }
    }
  };
  visit(where);
}

/** True when a fetched row belongs to the tenant (checked under both spellings; missing = no). */
export function rowInTenant(row: Record<string, unknown>, tenant: ResolvedTenant): boolean {
  return fieldSpellings(tenant.field).some((name) => row[name] === tenant.value);
}
