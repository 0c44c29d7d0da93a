import { tierReaches, type PermissionLevel } from '../core/constants';
import {
  AccessDeniedError,
  PermissionDeniedError,
  ToolFilteredError,
  UnknownToolError,
  type ParseAgentError,
} from '../core/errors';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import type { ModelClass } from '../metadata/metadata.types';
import { passesListFilter, type NormalizedListFilter } from '../security/class-filter';
import type { ReadPolicy } from '../security/read-policy';
import { findAgentMethod, methodDenial } from '../tools/builtin/mutation/agent-method-gate';
import { ENV_GATES, envGateRefusal } from '../tools/env-gates';
import type { ToolAgent } from '../tools/tool-context';
import type { ToolDefinition } from '../tools/tool-definition';
import { unknownToolError } from '../tools/unknown-tool';
import type { PermitDecision } from './agent-options';

/**
 * The gates a tool call passes before it runs, as pure functions of the agent's settings: the
 * tier, the `tools` filter, the client-mode ceiling, the environment gates and the data path.
 * `execute()` and `wouldPermit()` walk the same ones in the same order.
 */
export interface GatedAgent extends ToolAgent {
  readonly permissions: PermissionLevel;
  readonly clientMode: boolean;
  readonly allowMutations: boolean;
  readonly access: ReadPolicy;
}

/** Why a tool is beyond a client-mode (session-token) agent's ceiling, or undefined. */
export function clientCeilingRefusal(agent: GatedAgent, tool: ToolDefinition): string | undefined {
  if (!agent.clientMode) return undefined;
  if (tool.clientSafe === false) {
    return `Tool '${tool.name}' is not available to session-token (client mode) agents: it needs the master key. Use a master-key agent for it.`;
  }
  if (tool.envGate === 'rawCrud' && !agent.allowMutations) {
    return `Raw mutation tool '${tool.name}' is disabled for this session-token (client mode) agent. Create the agent with allowMutations: true to enable it; ${ENV_GATES.writeTools} and ${ENV_GATES.rawCrud} must also be set on the server.`;
  }
  return undefined;
}

/**
 * Why a tool that declares `access: 'master'` (raw data paths, with the master key) is beyond
 * this agent, or undefined: such a tool is for master-key agents only, never for a session-token,
 * aclUser or aclRole agent (nor a sub-agent scoped to one).
 */
export function masterAccessRefusal(
  agent: Pick<GatedAgent, 'usingMasterKey' | 'authType'>,
  tool: ToolDefinition,
): string | undefined {
  if (tool.access !== 'master' || agent.usingMasterKey) return undefined;
  return `Tool '${tool.name}' declares access: 'master' (it reads and writes with the master key) and is only available to master-key agents; this agent acts for a ${agent.authType.replace('_', ' ')} identity.`;
}

/** One tool through the gates of allowedTools() (a call checks only the tool it runs). */
export function permitsTool(
  agent: GatedAgent,
  toolFilter: NormalizedListFilter | undefined,
  tool: ToolDefinition,
): boolean {
  return (
    tierReaches(agent.permissions, tool.permission) &&
    passesListFilter(toolFilter, [tool.name]) &&
    !masterAccessRefusal(agent, tool) &&
    !clientCeilingRefusal(agent, tool)
  );
}

/** The error refusing a tool the agent may not call (undefined when it may). */
export function toolRefusal(
  agent: GatedAgent,
  toolFilter: NormalizedListFilter | undefined,
  toolName: string,
  tool: ToolDefinition | undefined,
): ParseAgentError | undefined {
  if (tool && permitsTool(agent, toolFilter, tool)) return undefined;
  // A name the registry does not have is a typo or a tool this server lacks, not a permission
  // problem: say so, with close names among the tools this agent may call.
  if (!tool) return unknownToolError(toolName, agent.allowedTools());
  const tierPermits = tierReaches(agent.permissions, tool.permission);
  // The operator's tools: filter is named first when it is what refuses (it is the real fix).
  const ceiling = tierPermits
    ? (masterAccessRefusal(agent, tool) ?? clientCeilingRefusal(agent, tool))
    : undefined;
  if (ceiling && passesListFilter(toolFilter, [toolName])) {
    return new AccessDeniedError(ceiling);
  }
  if (tierPermits) {
    return new ToolFilteredError(
      `Tool '${toolName}' is not enabled for this agent instance (excluded by the configured tools: filter).`,
    );
  }
  return new PermissionDeniedError(
    `Permission denied: '${toolName}' requires ${tool.permission} permissions. Current level: ${agent.permissions}`,
  );
}

/** What wouldPermit needs besides the agent: the tool, the gates the agent runs, the metadata. */
export interface PermitCheck {
  tool: ToolDefinition | undefined;
  permits: (tool: ToolDefinition) => boolean;
  refusal: (toolName: string, tool: ToolDefinition | undefined) => ParseAgentError | undefined;
  dataReachable: (tool: ToolDefinition) => boolean;
  metadata: MetadataRegistry;
}

/**
 * Would the agent be allowed to run the tool (on the class, the agent method)? The same gates as
 * a call, in the same order, without I/O or side effects (see ParseAgent.wouldPermit).
 */
export function permitDecision(
  agent: GatedAgent,
  toolName: string,
  options: { className?: string | ModelClass; methodName?: string },
  check: PermitCheck,
): PermitDecision {
  const { tool } = check;
  if (
    tool &&
    masterAccessRefusal(agent, tool) &&
    check.refusal(toolName, tool) instanceof AccessDeniedError
  ) {
    return { allowed: false, reason: 'access_denied', denied_at: 'master_access' };
  }
  if (!tool || !check.permits(tool)) {
    const refusal = check.refusal(toolName, tool);
    if (refusal instanceof ToolFilteredError)
      return { allowed: false, reason: 'tool_filtered', denied_at: 'allowed_tools' };
    if (refusal instanceof AccessDeniedError)
      return { allowed: false, reason: 'access_denied', denied_at: 'client_mode_ceiling' };
    if (refusal instanceof UnknownToolError)
      return { allowed: false, reason: 'unknown_tool', denied_at: 'tool_registry' };
    return { allowed: false, reason: 'permission_denied', denied_at: 'permission_tier' };
  }
  if (envGateRefusal(tool, agent.allowMutations))
    return { allowed: false, reason: 'access_denied', denied_at: 'env_gate' };
  if (!check.dataReachable(tool))
    return { allowed: false, reason: 'invalid_configuration', denied_at: 'data_path' };
  if (options.className === undefined) return { allowed: true };
  const className = check.metadata.resolveClassName(options.className);
  try {
    agent.access.assertClassAccessible(className);
  } catch (error) {
    const kind = error instanceof AccessDeniedError ? error.kind : undefined;
    return {
      allowed: false,
      reason: kind ?? 'access_denied',
      denied_at: 'assert_class_accessible',
    };
  }
  try {
    agent.access.tenant(className);
  } catch {
    return { allowed: false, reason: 'tenant_scope', denied_at: 'tenant_scope' };
  }
  if (options.methodName !== undefined) {
    const method = findAgentMethod(agent.access, className, options.methodName);
    if (!method) return { allowed: false, reason: 'unknown_method', denied_at: 'declared_methods' };
    const denial = methodDenial(agent, className, method);
    if (denial) return { allowed: false, reason: denial.reason, denied_at: denial.deniedAt };
  }
  return { allowed: true };
}
