import { METADATA } from '../metadata.constants';
import type { TenantScope, TenantScopeOptions } from '../metadata.types';
import { decoratorError } from './decorator-errors';
import { isInternalField } from '../../query/internal-fields';

/**
 * Binds every agent query on the class to the agent's tenant: `field` must equal the value `from`
 * returns (the agent's `tenantId` by default). `bypass` lets chosen agents read across tenants.
 */
export function AgentTenantScope(field: string, options: TenantScopeOptions = {}): ClassDecorator {
  return (target) => {
    if (
      typeof field !== 'string' ||
      !/^[A-Za-z][A-Za-z0-9_]*$/.test(field) ||
      isInternalField(field)
    ) {
      throw decoratorError(
        'AgentTenantScope',
        target,
        `${JSON.stringify(field)} is not a usable tenant field name.`,
      );
    }
    if (options.from !== undefined && typeof options.from !== 'function') {
      throw decoratorError(
        'AgentTenantScope',
        target,
        '`from` must be a function (agent) => tenant value.',
      );
    }
    if (options.bypass !== undefined && typeof options.bypass !== 'function') {
      throw decoratorError(
        'AgentTenantScope',
        target,
        '`bypass` must be a function (agent) => boolean.',
      );
    }
    const scope: TenantScope = {
      field,
      from: options.from ?? ((agent) => agent.tenantId),
      bypass: options.bypass,
    };
    Reflect.defineMetadata(METADATA.tenantScope, scope, target);
  };
}
