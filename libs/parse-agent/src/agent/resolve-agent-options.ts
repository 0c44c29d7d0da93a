import type { AuthType } from '../core/agent-identity';
import { identityValue } from '../core/identity-value';
import {
  DEFAULT_RECURSION_DEPTH,
  isPermissionLevel,
  tierReaches,
  type PermissionLevel,
} from '../core/constants';
import {
  ParseAgentConfigError,
  ParseAgentError,
  RecursionLimitExceededError,
} from '../core/errors';
import type { ModelClass } from '../metadata/metadata.types';
import { SlidingWindowRateLimiter } from '../ports/in-memory-rate-limiter';
import { isRateLimiter, type RateLimiter } from '../ports/rate-limiter';
import { validateWhere, type Where } from '../query/constraint-translator';
import { isPlainObject } from '../core/plain-object';
import { andWhere } from '../query/where-composer';
import {
  normalizeListFilter,
  type ListFilterInput,
  type NormalizedListFilter,
} from '../security/class-filter';
import { toolProfileNames } from '../tools/tool-profiles';
import { PERMISSION_LEVELS } from '../tools/tool-tiers';
import {
  assertSubAgentIdentity,
  assertSubAgentSwitches,
  buildOwnRateWindows,
  intersectListFilters,
} from './agent-options-parent';
import type { AgentOwnOptions, AgentServices } from './agent-options';
import { resolveApprovalOption, type ApprovalSettings } from './agent-approval';
import { resolvePromptCanaries, type PromptCanaries } from './prompt-canaries';
import { checkImpersonateOption, type ResolvedImpersonation } from './agent-impersonation';
import { resolveObservabilityOptions, type ObservabilitySettings } from './agent-observability';

/**
 * What an agent keeps of its parent when it is built as a sub-agent: everything it may only
 * narrow. (The ParseAgent hands out its own, so resolution never touches the agent class.)
 */
export interface InheritedSettings {
  agentId: string;
  permissions: PermissionLevel;
  sessionToken?: string;
  aclUser?: string;
  aclRole?: string;
  tenantId?: string;
  recursionDepth: number;
  agentDepth: number;
  toolFilter?: NormalizedListFilter;
  /** The named profile the tools filter came from (this agent's, else its parent's). */
  toolProfile?: string;
  methodFilter?: NormalizedListFilter;
  inheritedMethodFilters: readonly NormalizedListFilter[];
  classFilter?: NormalizedListFilter;
  filters: Readonly<Record<string, Where>>;
  allowMutations: boolean;
  confirmationRequired: boolean;
  agentDebug: boolean;
  ownRateWindows: readonly SlidingWindowRateLimiter[];
  rateLimiter: RateLimiter;
  correlationId?: string;
  observability: ObservabilitySettings;
  sourceProvenance: boolean;
  /** Tiers whose calls wait for a person's approval, and how long. */
  approvals: ApprovalSettings;
  /** Canaries every tool result is scanned for (this agent's and its ancestors'). */
  promptCanaries?: PromptCanaries;
  /** The parent's impersonation (a sub-agent with the same session shows the same user and label). */
  impersonation?: ResolvedImpersonation;
}

/** An agent's settings after validation and inheritance. */
export interface ResolvedAgentSettings extends Omit<InheritedSettings, 'agentId'> {
  authType: AuthType;
  parentAgentId?: string;
  strictModes: { toolFilter: boolean; classFilter: boolean };
}

/**
 * Validates an agent's options and applies its parent's limits. Throws ParseAgentConfigError
 * (or AccessDeniedError, RecursionLimitExceededError) naming the option to fix; warns through
 * `warn` where the spec only warns. `agentId` is the new agent's, for the data-path check.
 */
export function resolveAgentOptions(
  options: AgentOwnOptions,
  services: AgentServices,
  parent: InheritedSettings | undefined,
  agentId: string,
  warn: (message: string) => void,
): ResolvedAgentSettings {
  if (options.impersonate !== undefined) {
    checkImpersonateOption(options.impersonate);
    throw new ParseAgentConfigError(
      'impersonate resolves a session of the user with Parse Server before the agent acts; create the agent with `await parseAgentFactory.createValidated(options)`, or call `await agent.impersonate(user)` on a master-key agent, instead of create() or new ParseAgent().',
    );
  }
  if (options.validateSession === true) {
    throw new ParseAgentConfigError(
      'validateSession: true checks the session token with Parse Server before the agent exists; create it with `await parseAgentFactory.createValidated(options)` instead of create() or new ParseAgent().',
    );
  }
  const permissions = options.permissions ?? 'readonly';
  if (!isPermissionLevel(permissions)) {
    throw new ParseAgentConfigError(
      `permissions must be one of readonly, write, admin (got ${JSON.stringify(permissions)}).`,
    );
  }
  if (parent && !tierReaches(parent.permissions, permissions)) {
    throw new ParseAgentConfigError(
      `A sub-agent cannot have more permissions (${permissions}) than its parent (${parent.permissions}).`,
    );
  }
  const { identity, authType } = resolveIdentity(options, parent);
  if (
    (identity.aclUser || identity.aclRole) &&
    !services.data.serves('find', {
      agentId,
      permissions,
      authType,
      usingMasterKey: false,
      ...identity,
    })
  ) {
    throw new ParseAgentConfigError(
      'aclUser and aclRole scopes are enforced on a direct database path; configure `mongo` or `postgres` in ParseAgentModule.forRoot, or use sessionToken.',
    );
  }

  const tenantId = identityValue('tenantId', options.tenantId) ?? parent?.tenantId;
  if (parent?.tenantId && tenantId !== parent.tenantId) {
    throw new ParseAgentConfigError('A sub-agent cannot change its parent’s tenant.');
  }

  let depth: { recursionDepth: number; agentDepth: number; parentAgentId?: string };
  if (parent) {
    if (parent.recursionDepth - 1 < 0) throw new RecursionLimitExceededError(parent.agentDepth);
    if (options.recursionDepth !== undefined) {
      warn(
        `recursionDepth is ignored for a sub-agent: it gets its parent's budget minus one (${parent.recursionDepth - 1}).`,
      );
    }
    depth = {
      recursionDepth: parent.recursionDepth - 1,
      agentDepth: parent.agentDepth + 1,
      parentAgentId: parent.agentId,
    };
  } else {
    depth = { recursionDepth: options.recursionDepth ?? DEFAULT_RECURSION_DEPTH, agentDepth: 0 };
  }

  const listFilters = resolveListFilters(options, services, parent, warn);
  const filters = Object.freeze(buildFilters(options.filters, parent));
  const parentAllows = parent ? parent.allowMutations : true;
  if (options.allowMutations === true && !parentAllows) {
    throw new ParseAgentConfigError(
      'A sub-agent cannot set allowMutations: true when its parent does not allow mutations; omit it to inherit.',
    );
  }
  const allowMutations =
    options.allowMutations === undefined
      ? parent
        ? parentAllows
        : authType === 'master_key'
      : options.allowMutations === true;
  if (parent) assertSubAgentSwitches(parent, options);
  const confirmationRequired = options.confirmationRequired ?? parent?.confirmationRequired ?? true;
  const agentDebug = options.agentDebug ?? parent?.agentDebug ?? false;
  const strictModes = {
    toolFilter: options.strictToolFilter === true,
    classFilter: options.strictClassFilter === true,
  };
  if (options.rateLimiter !== undefined && !isRateLimiter(options.rateLimiter)) {
    throw new ParseAgentConfigError(
      'rateLimiter must implement the RateLimiter port: an object with a check(key) method that throws RateLimitExceededError when over the limit.',
    );
  }
  const ownRateWindows = buildOwnRateWindows(
    options,
    parent && { windows: parent.ownRateWindows, sharedLimit: parent.rateLimiter.limit },
  );
  const rateLimiter =
    options.rateLimiter ??
    parent?.rateLimiter ??
    services.rateLimiter ??
    new SlidingWindowRateLimiter();
  return {
    permissions,
    ...identity,
    authType,
    tenantId,
    ...depth,
    ...listFilters,
    filters,
    allowMutations,
    confirmationRequired,
    agentDebug,
    strictModes,
    ownRateWindows,
    rateLimiter,
    correlationId: options.correlationId ?? parent?.correlationId,
    observability: resolveObservabilityOptions(options, parent?.observability),
    impersonation: parent?.impersonation,
    approvals: resolveApprovalOption(options.confirm, parent?.approvals),
    promptCanaries: resolvePromptCanaries(options.promptCanaries, parent?.promptCanaries),
    sourceProvenance: resolveBooleanOption(
      'sourceProvenance',
      options.sourceProvenance,
      parent?.sourceProvenance ?? false,
    ),
  };
}

/**
 * One identity at most; a sub-agent inherits its parent's, or names the same one. An identity
 * property that is present must be usable (see identityValue): only an agent given none at all
 * runs with the master key.
 */
function resolveIdentity(
  options: AgentOwnOptions,
  parent: InheritedSettings | undefined,
): {
  identity: { sessionToken?: string; aclUser?: string; aclRole?: string };
  authType: AuthType;
} {
  const givenUser: unknown = options.aclUser;
  // `{ objectId }` names a user too; such an object without its objectId is no user at all.
  const aclUser =
    typeof givenUser === 'object' && givenUser !== null && !Array.isArray(givenUser)
      ? identityValue('aclUser.objectId', (givenUser as { objectId?: unknown }).objectId ?? null)
      : identityValue('aclUser', givenUser);
  const own = {
    sessionToken: identityValue('sessionToken', options.sessionToken),
    aclUser,
    aclRole: identityValue('aclRole', options.aclRole),
  };
  const identities = Object.entries(own)
    .filter(([, value]) => value !== undefined)
    .map(([key]) => key);
  if (identities.length > 1) {
    throw new ParseAgentConfigError(`Pass only one identity; got ${identities.join(' and ')}.`);
  }
  // A sub-agent that names no identity inherits its parent's; one that names one may only
  // name its parent's (a master-key parent may hand down any).
  const identity =
    parent && identities.length === 0
      ? { sessionToken: parent.sessionToken, aclUser: parent.aclUser, aclRole: parent.aclRole }
      : own;
  if (parent) assertSubAgentIdentity(parent, identity);
  const authType: AuthType = identity.sessionToken
    ? 'session_token'
    : identity.aclUser
      ? 'acl_user'
      : identity.aclRole
        ? 'acl_role'
        : 'master_key';
  return { identity, authType };
}

/** The tools, methods and classes filters, checked against what is registered and narrowed. */
function resolveListFilters(
  options: AgentOwnOptions,
  services: AgentServices,
  parent: InheritedSettings | undefined,
  warn: (message: string) => void,
): Pick<
  InheritedSettings,
  'toolFilter' | 'toolProfile' | 'methodFilter' | 'inheritedMethodFilters' | 'classFilter'
> {
  const toolProfile = typeof options.tools === 'string' ? options.tools : undefined;
  let toolFilter: NormalizedListFilter | undefined;
  if (toolProfile !== undefined) {
    const names = toolProfileNames(toolProfile);
    toolFilter = names && { only: new Set(names), except: new Set<string>() };
  } else {
    toolFilter = normalizeListFilter(
      options.tools as ListFilterInput<string> | undefined,
      'tools',
      (t) => [String(t)],
    );
  }
  if (toolFilter && toolProfile === undefined) {
    const known = new Set([
      ...services.tools.list().map((t) => t.name),
      ...PERMISSION_LEVELS.admin,
    ]);
    const unknown = [...(toolFilter.only ?? []), ...toolFilter.except].filter((t) => !known.has(t));
    if (unknown.length) {
      const message = `tools filter names unknown tool(s): ${unknown.join(', ')}.`;
      if (options.strictToolFilter) throw new ParseAgentConfigError(message);
      warn(message);
    }
  }
  if (parent?.toolFilter) toolFilter = intersectListFilters(parent.toolFilter, toolFilter, 'tools');
  // Method names may be bare or Class-qualified, so a sub-agent keeps its ancestors' method
  // filters and must pass every one of them as well as its own.
  const ownMethods = normalizeListFilter(options.methods, 'methods', (m) => [String(m)]);
  const inheritedMethodFilters = parent
    ? [...parent.inheritedMethodFilters, ...(parent.methodFilter ? [parent.methodFilter] : [])]
    : [];
  const methodFilter = ownMethods ?? parent?.methodFilter;
  const classNames = (c: string | ModelClass) => {
    if (typeof c === 'string') return [c];
    const name = services.metadata.resolveClassName(c);
    return services.metadata.nameVariants(name);
  };
  let classFilter = normalizeListFilter(options.classes, 'classes', classNames);
  // Only this agent's own `only` names are checked (a parent's were checked, and warned about,
  // when it was built). A class may be registered later, so an unknown name warns unless strict;
  // `except` is never checked, as blocking a class before it exists is legitimate.
  if (classFilter?.only) {
    // Every spelling of a registered class (the filter holds all of a model's variants).
    const registered = new Set(
      services.metadata.all().flatMap((m) => services.metadata.nameVariants(m.className)),
    );
    const unknown = [...classFilter.only].filter((c) => !registered.has(c) && !c.startsWith('_'));
    if (unknown.length) {
      const message = `classes filter names unregistered class(es): ${unknown.join(', ')}.`;
      if (options.strictClassFilter) throw new ParseAgentConfigError(message);
      warn(`${message} They match nothing until a model declares them.`);
    }
  }
  if (parent?.classFilter)
    classFilter = intersectListFilters(parent.classFilter, classFilter, 'classes');
  return {
    toolFilter,
    toolProfile: toolProfile ?? parent?.toolProfile,
    methodFilter,
    inheritedMethodFilters,
    classFilter,
  };
}

/** Per-class filters: the parent's, each ANDed with this agent's own entry for the class. */
function buildFilters(
  input: AgentOwnOptions['filters'],
  parent?: InheritedSettings,
): Record<string, Where> {
  const out: Record<string, Where> = { ...(parent?.filters ?? {}) };
  if (input === undefined || input === null) return out;
  if (!isPlainObject(input))
    throw new ParseAgentConfigError('filters must be an object of { ClassName: where }.');
  for (const [key, where] of Object.entries(input)) {
    if (!isPlainObject(where))
      throw new ParseAgentConfigError(`filters.${key} must be a where object.`);
    try {
      validateWhere(where);
    } catch (error) {
      if (error instanceof ParseAgentError)
        throw new ParseAgentConfigError(
          `filters.${key} is not a valid constraint: ${error.message}`,
        );
      throw error;
    }
    out[key] = andWhere(parent?.filters[key], where);
  }
  return out;
}

/** A boolean option: unset gives `fallback`; anything but true or false names the option. */
function resolveBooleanOption(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new ParseAgentConfigError(
      `${name} must be true or false (got ${JSON.stringify(value)}).`,
    );
  return value;
}
