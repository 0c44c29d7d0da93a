import type { PermissionLevel } from '../core/constants';

/** Operator switches read from the environment; each defaults to off. */
export const ENV_GATES = {
  writeTools: 'PARSE_AGENT_ALLOW_WRITE_TOOLS',
  schemaOps: 'PARSE_AGENT_ALLOW_SCHEMA_OPS',
  rawCrud: 'PARSE_AGENT_ALLOW_RAW_CRUD',
  rawSchema: 'PARSE_AGENT_ALLOW_RAW_SCHEMA',
} as const;

/**
 * Which operator switches a tool needs, declared on its definition:
 * - `rawCrud`: PARSE_AGENT_ALLOW_WRITE_TOOLS AND PARSE_AGENT_ALLOW_RAW_CRUD AND the agent's
 *   allowMutations;
 * - `rawSchema`: PARSE_AGENT_ALLOW_SCHEMA_OPS AND PARSE_AGENT_ALLOW_RAW_SCHEMA;
 * - `writeTools`: PARSE_AGENT_ALLOW_WRITE_TOOLS (write-tier agent methods, intent-based writes);
 * - `schemaOps`: PARSE_AGENT_ALLOW_SCHEMA_OPS (admin-tier agent methods).
 */
export type ToolEnvGate = 'rawCrud' | 'rawSchema' | 'writeTools' | 'schemaOps';

/** The switch an agent method of a tier needs: none for readonly methods. */
export function methodEnvGate(permission: PermissionLevel): ToolEnvGate | undefined {
  if (permission === 'write') return 'writeTools';
  if (permission === 'admin') return 'schemaOps';
  return undefined;
}

const TRUTHY = /^(1|true|yes|on)$/i;

export function isTruthyEnv(value: string | undefined): boolean {
  return value !== undefined && TRUTHY.test(value.trim());
}

export function gateEnabled(
  gate: keyof typeof ENV_GATES,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return isTruthyEnv(env[ENV_GATES[gate]]);
}

/**
 * Returns the refusal message when a gated tool may not run, or undefined. Only the requirements
 * still missing are listed, so the operator sees exactly what to switch on.
 */
export function envGateRefusal(
  tool: { name: string; envGate?: ToolEnvGate },
  allowMutations: boolean,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (tool.envGate === 'rawCrud') {
    const missing: string[] = [];
    if (!gateEnabled('writeTools', env)) missing.push(`${ENV_GATES.writeTools}=true`);
    if (!gateEnabled('rawCrud', env)) missing.push(`${ENV_GATES.rawCrud}=true`);
    if (!allowMutations) missing.push('allowMutations: true (agent option)');
    if (!missing.length) return undefined;
    return `'${tool.name}' is a raw CRUD tool and is disabled. It needs ${missing.join(' AND ')}. Prefer a declared agent method (@AgentMethod) for domain writes.`;
  }
  if (tool.envGate === 'rawSchema') {
    const missing: string[] = [];
    if (!gateEnabled('schemaOps', env)) missing.push(`${ENV_GATES.schemaOps}=true`);
    if (!gateEnabled('rawSchema', env)) missing.push(`${ENV_GATES.rawSchema}=true`);
    if (!missing.length) return undefined;
    return `'${tool.name}' is a raw schema tool and is disabled: it changes the whole application's schema. It needs ${missing.join(' AND ')}.`;
  }
  if (tool.envGate === 'writeTools' || tool.envGate === 'schemaOps') {
    if (gateEnabled(tool.envGate, env)) return undefined;
    const what = tool.envGate === 'writeTools' ? 'changes data' : 'is an admin operation';
    return `'${tool.name}' ${what} and is disabled on this server. It needs ${ENV_GATES[tool.envGate]}=true (an operator setting).`;
  }
  return undefined;
}
