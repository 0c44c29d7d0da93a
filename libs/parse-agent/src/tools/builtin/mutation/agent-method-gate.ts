import type { PermissionLevel } from '../../../core/constants';
import { AccessDeniedError, PermissionDeniedError, ToolFilteredError } from '../../../core/errors';
import type { AgentMethodDeclaration } from '../../../metadata/metadata.types';
import type { DataPrincipals } from '../../../ports/data-path';
import { clpGrants, type ClpOperation } from '../../../security/clp-check';
import type { ReadPolicy } from '../../../security/read-policy';
import { envGateRefusal, methodEnvGate } from '../../env-gates';
import type { ToolAgent } from '../../tool-context';

/** Why an agent may not call a declared method, as `wouldPermit` reports it. */
export interface MethodDenial {
  reason: 'unknown_method' | 'permission_denied' | 'tool_filtered' | 'access_denied';
  deniedAt: 'declared_methods' | 'method_tier' | 'methods_filter' | 'env_gate';
  error: Error;
}

/** The declared agent method, if any (instance and static methods share one namespace). */
export function findAgentMethod(
  access: ReadPolicy,
  className: string,
  methodName: string,
): AgentMethodDeclaration | undefined {
  return access.meta(className)?.methods.find((m) => m.name === methodName);
}

/**
 * The gates a declared method passes before anything runs, in the spec's order: its tier against
 * the agent's, the per-agent `methods:` filter, then the operator's env switch for its tier. The
 * CLP boundary needs I/O and is checked by call_method itself.
 */
export function methodDenial(
  agent: ToolAgent,
  className: string,
  method: AgentMethodDeclaration,
): MethodDenial | undefined {
  const qualified = `${className}.${method.name}`;
  const permission = method.permission ?? 'readonly';
  if (agent.tierReaches && !agent.tierReaches(permission)) {
    return {
      reason: 'permission_denied',
      deniedAt: 'method_tier',
      error: new PermissionDeniedError(
        `Permission denied: agent method '${qualified}' requires ${permission} permissions. Current level: ${agent.permissions}`,
      ),
    };
  }
  if (agent.methodPermitted && !agent.methodPermitted(className, method.name)) {
    return {
      reason: 'tool_filtered',
      deniedAt: 'methods_filter',
      error: new ToolFilteredError(
        `Agent method '${qualified}' is not enabled for this agent instance (excluded by the configured methods: filter).`,
      ),
    };
  }
  const gate = envGateRefusal({ name: qualified, envGate: methodEnvGate(permission) }, false);
  if (gate) {
    return { reason: 'access_denied', deniedAt: 'env_gate', error: new AccessDeniedError(gate) };
  }
  return undefined;
}

/** The CLP operation a method's tier must be granted on its class (the spec's mapping). */
const TIER_CLP: Readonly<Record<PermissionLevel, ClpOperation>> = {
  readonly: 'find',
  write: 'update',
  admin: 'delete',
};

/**
 * The class-level permission a method's tier maps to (readonly `find`, write `update`, admin
 * `delete`) must be granted to the agent's principals on the method's class.
 */
export async function assertMethodClp(
  access: ReadPolicy,
  principals: DataPrincipals,
  className: string,
  qualified: string,
  permission: PermissionLevel,
): Promise<void> {
  const schema = await access.schema(className);
  if (clpGrants(schema?.classLevelPermissions, TIER_CLP[permission], principals)) return;
  throw new AccessDeniedError(
    `'${qualified}' is a ${permission} method and needs the '${TIER_CLP[permission]}' class-level permission on '${className}', which this agent's identity does not have.`,
    { kind: 'clp_denied' },
  );
}

/**
 * The argument names call_method accepts for a method: its permittedKeys when declared (the
 * mass-assignment boundary), else the properties of its parameters schema, else none.
 */
export function acceptedArgumentNames(method: AgentMethodDeclaration): string[] {
  const properties = method.parameters?.properties;
  const schemaKeys =
    properties && typeof properties === 'object' && !Array.isArray(properties)
      ? Object.keys(properties)
      : undefined;
  return method.permittedKeys ?? schemaKeys ?? [];
}

/**
 * What call_method's `arguments` accepts for a method, as one JSON Schema: exactly the accepted
 * names (each with its declared schema, derived from the DTO when one was given), closed to
 * anything else, plus the `dry_run` flag every method takes. A name declared in permittedKeys
 * but absent from the parameters is accepted as any JSON value.
 */
export function methodArgumentsSchema(method: AgentMethodDeclaration): Record<string, unknown> {
  const declared = (method.parameters?.properties ?? {}) as Record<string, unknown>;
  const accepted = acceptedArgumentNames(method);
  const properties: Record<string, unknown> = {};
  for (const name of accepted) {
    properties[name] = declared[name] ?? { description: 'Any JSON value (no schema declared).' };
  }
  properties.dry_run = {
    type: 'boolean',
    description: 'true: preview the call and change nothing.',
  };
  const required = Array.isArray(method.parameters?.required)
    ? (method.parameters.required as unknown[]).filter(
        (name): name is string => typeof name === 'string' && accepted.includes(name),
      )
    : [];
  const description = method.parameters?.description;
  return {
    type: 'object',
    ...(typeof description === 'string' ? { description } : {}),
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}

/** get_schema's view of the methods this agent may call on a class. */
export function describeAgentMethods(
  agent: ToolAgent,
  access: ReadPolicy,
  className: string,
): Array<Record<string, unknown>> {
  const methods = access.meta(className)?.methods ?? [];
  return methods
    .filter((m) => !agent.tierReaches || agent.tierReaches(m.permission ?? 'readonly'))
    .filter((m) => !agent.methodPermitted || agent.methodPermitted(className, m.name))
    .map((m) => {
      const entry: Record<string, unknown> = {
        name: m.name,
        type: m.static ? 'class' : 'instance',
        permission: m.permission ?? 'readonly',
        supports_dry_run: m.supportsDryRun === true,
      };
      if (m.description) entry.description = m.description;
      // What call_method's `arguments` takes: an agent cannot call a method correctly without it,
      // and a call with another key is refused with the accepted names anyway.
      entry.parameters = methodArgumentsSchema(m);
      if (m.permittedKeys) entry.permitted_keys = m.permittedKeys;
      return entry;
    });
}
