import { gateEnabled } from './env-gates';
import type { ToolAgent } from './tool-context';
import type { ToolDefinition } from './tool-definition';

/**
 * Operator-side predicates: the state of each environment switch, a tool's category, whether an
 * agent may call a tool. For startup checks and dashboards; nothing here is shown to a model.
 * Each switch is read on its own: the raw CRUD tools need `writeToolsEnabled()` AND
 * `rawCrudEnabled()` AND the agent's `allowMutations`; the raw schema tools `schemaOpsEnabled()`
 * AND `rawSchemaEnabled()` (see `agent.wouldPermit(tool)` for the whole decision).
 */

/** PARSE_AGENT_ALLOW_WRITE_TOOLS: write-tier agent methods (and, with the raw CRUD switch, raw writes). */
export function writeToolsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return gateEnabled('writeTools', env);
}

/** PARSE_AGENT_ALLOW_SCHEMA_OPS: admin-tier agent methods (and, with the raw schema switch, schema tools). */
export function schemaOpsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return gateEnabled('schemaOps', env);
}

/** PARSE_AGENT_ALLOW_RAW_CRUD: the narrower switch for create_object / update_object / delete_object. */
export function rawCrudEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return gateEnabled('rawCrud', env);
}

/** PARSE_AGENT_ALLOW_RAW_SCHEMA: the narrower switch for create_class / delete_class. */
export function rawSchemaEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return gateEnabled('rawSchema', env);
}

/** The category a registered tool declares (`'aggregate'`, `'custom'`...), or undefined for an unknown name. */
export function toolCategory(
  registry: { get(name: string): Pick<ToolDefinition, 'category'> | undefined },
  toolName: string,
): string | undefined {
  return typeof toolName === 'string' ? registry.get(toolName)?.category : undefined;
}

/**
 * Whether the agent may call the tool: it is among `agent.allowedTools()` (tier, tools filter,
 * client-mode ceiling, raw CRUD without allowMutations, a tool no configured data path serves).
 */
export function toolAllowed(agent: Pick<ToolAgent, 'allowedTools'>, toolName: string): boolean {
  return typeof toolName === 'string' && agent.allowedTools().includes(toolName);
}
