/** Operator switches read from the environment; each defaults to off. */
export const ENV_GATES = {
  writeTools: 'PARSE_AGENT_ALLOW_WRITE_TOOLS',
  schemaOps: 'PARSE_AGENT_ALLOW_SCHEMA_OPS',
  rawCrud: 'PARSE_AGENT_ALLOW_RAW_CRUD',
  rawSchema: 'PARSE_AGENT_ALLOW_RAW_SCHEMA',
} as const;

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

const RAW_CRUD_TOOLS = new Set(['create_object', 'update_object', 'delete_object']);
const RAW_SCHEMA_TOOLS = new Set(['create_class', 'delete_class']);

/**
 * Returns the refusal message when a gated tool may not run, or undefined. Only the requirements
 * still missing are listed, so the operator sees exactly what to switch on.
 */
export function envGateRefusal(
  toolName: string,
  allowMutations: boolean,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (RAW_CRUD_TOOLS.has(toolName)) {
    const missing: string[] = [];
    if (!gateEnabled('writeTools', env)) missing.push(`${ENV_GATES.writeTools}=true`);
    if (!gateEnabled('rawCrud', env)) missing.push(`${ENV_GATES.rawCrud}=true`);
    if (!allowMutations) missing.push('allowMutations: true (agent option)');
    if (!missing.length) return undefined;
    return `'${toolName}' is a raw CRUD tool and is disabled. It needs ${missing.join(' AND ')}. Prefer a declared agent method (@AgentMethod) for domain writes.`;
  }
  if (RAW_SCHEMA_TOOLS.has(toolName)) {
    const missing: string[] = [];
    if (!gateEnabled('schemaOps', env)) missing.push(`${ENV_GATES.schemaOps}=true`);
    if (!gateEnabled('rawSchema', env)) missing.push(`${ENV_GATES.rawSchema}=true`);
    if (!missing.length) return undefined;
    return `'${toolName}' is a raw schema tool and is disabled: it changes the whole application's schema. It needs ${missing.join(' AND ')}.`;
  }
  return undefined;
}
