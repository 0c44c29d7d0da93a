import { securityBanner } from '../core/security-banner';
import type { MetadataRegistry } from './metadata-registry';

/**
 * The registered classes that agents acting for a user can see but that declare no tenant scope
 * (nor `@AgentTenantShared()`), in a deployment where other classes do: the classic cross-tenant pass-through, where a query on
 * the unscoped class returns every tenant's rows. Empty when no class declares a tenant scope (a
 * deployment without tenants) or every visible class does.
 */
export function unscopedVisibleClasses(metadata: MetadataRegistry): string[] {
  const models = metadata.all();
  if (!models.some((meta) => meta.tenantScope)) return [];
  return models
    .filter(
      (meta) =>
        !meta.tenantScope && !meta.tenantShared && !metadata.isHidden(meta.className, false),
    )
    .map((meta) => meta.className)
    .sort();
}

/**
 * Warns once per class and process (a security banner: the host's logger, or stderr) about each
 * class `unscopedVisibleClasses` finds. A class whose rows are meant for every tenant says so
 * with `@AgentTenantShared()`, and is left out.
 */
export function warnUnscopedClasses(metadata: MetadataRegistry): string[] {
  const unscoped = unscopedVisibleClasses(metadata);
  const scoped = metadata
    .all()
    .filter((meta) => meta.tenantScope)
    .map((meta) => meta.className)
    .sort();
  for (const className of unscoped) {
    securityBanner(
      `unscoped-class:${className}`,
      `Class '${className}' is visible to agents but declares no @AgentTenantScope, while ${scoped.join(', ')} do: its queries are not tenant-scoped and return every tenant's rows that the identity may read. Add @AgentTenantScope to '${className}', hide it (@AgentHidden), or, if its rows are meant for every tenant, declare @AgentTenantShared() on it.`,
    );
  }
  return unscoped;
}
