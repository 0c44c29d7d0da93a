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
    if (Reflect.hasOwnMetadata(METADATA.tenantShared, target)) {
      throw decoratorError('AgentTenantScope', target, SCOPED_AND_SHARED);
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

const SCOPED_AND_SHARED =
  'the class is declared both @AgentTenantScope and @AgentTenantShared: its rows either belong to one tenant each, or to every tenant. Keep one.';

/**
 * Declares that the class has no tenant scope on purpose: its rows are shared by every tenant (a
 * country list, the tenants themselves). It changes no query; it only records the choice, so the
 * start-up warning about agent-visible classes without a tenant scope (while others have one)
 * leaves this class out.
 */
export function AgentTenantShared(): ClassDecorator {
  return (target) => {
    if (Reflect.hasOwnMetadata(METADATA.tenantScope, target)) {
      throw decoratorError('AgentTenantShared', target, SCOPED_AND_SHARED);
    }
    Reflect.defineMetadata(METADATA.tenantShared, true, target);
  };
}
