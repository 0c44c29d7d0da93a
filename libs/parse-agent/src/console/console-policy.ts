import type { AgentServices, ParseAgent } from '../agent/parse-agent';
import type { DataOperation } from '../ports/data-path';
import { isInternalField } from '../query/internal-fields';
import { BUILTIN_TOOLS } from '../tools/builtin';

/** Why a field of a reachable class does not reach the agent. */
export type WithheldReason = 'protected' | 'not_allowlisted';

/** One class as this identity's agent sees it. */
export interface ConsoleClassPolicy {
  class_name: string;
  accessible: boolean;
  /** Why the class is out of reach (operator view only lists such classes). */
  reason?: string;
  /** The fields the agent reads (allowlist, minus what Parse's protectedFields hide). */
  fields_given: string[];
  /** Withheld fields by name; allowlist gaps are named to the operator only. */
  fields_withheld: Array<{ name: string; reason: WithheldReason }>;
  /** For a user: how many fields the allowlist leaves out (their names are not shown). */
  not_allowlisted_count: number;
  tenant_scope: { field: string; value: string | number } | null;
  canonical_filter: unknown;
  /** Field names of the agent's own filter for the class (values stay out, as in describe()). */
  agent_filter_fields: string[];
  methods: string[];
  /** Tools the agent may call in general but not on this class, with the gate that refuses. */
  tools_refused: Array<{ tool: string; reason?: string; denied_at?: string }>;
}

export interface ConsoleToolPolicy {
  name: string;
  category: string;
  permission: string;
  allowed: boolean;
  reason?: string;
  denied_at?: string;
}

export interface ConsolePolicy {
  classes: ConsoleClassPolicy[];
  tools: ConsoleToolPolicy[];
  /** For a user: the app's own tools refused to them, counted (their names are not shown). */
  unnamed_refused_tools: number;
}

/** Built-in tool names are public vocabulary; an app's own refused tools are named to the operator. */
const BUILTIN_TOOL_NAMES = new Set(BUILTIN_TOOLS.map((t) => t.name));

/** Operations whose path knows Parse's protectedFields for an identity, in the order asked. */
const PROTECTED_FIELD_SOURCES: DataOperation[] = ['find', 'group_by', 'aggregate'];

/**
 * The policy view of one agent, built only from its own introspection (describeFor, wouldPermit)
 * and the schema its tools read: no tool runs, nothing is counted against its rate limit. A user
 * sees only the classes their agent reaches and no names their MCP client could not learn; the
 * operator sees every registered class with the reason it is out of reach.
 */
export async function consolePolicy(
  agent: ParseAgent,
  services: AgentServices,
  options: { operator: boolean },
): Promise<ConsolePolicy> {
  const every = services.tools.list().map((tool): ConsoleToolPolicy => {
    const decision = agent.wouldPermit(tool.name);
    return {
      name: tool.name,
      category: tool.category,
      permission: tool.permission,
      allowed: decision.allowed,
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...(decision.denied_at ? { denied_at: decision.denied_at } : {}),
    };
  });
  // What tools/list would not show a user: refused tools of the app's own, by name.
  const tools = every.filter(
    (t) => t.allowed || options.operator || BUILTIN_TOOL_NAMES.has(t.name),
  );
  const classTools = services.tools
    .list()
    .filter((t) => agent.wouldPermit(t.name).allowed && takesClassName(t.inputSchema));
  const classes: ConsoleClassPolicy[] = [];
  for (const meta of services.metadata.all()) {
    const described = agent.describeFor(meta.className);
    const accessible = described.accessible === 'permitted';
    if (!accessible && !options.operator) continue;
    const entry: ConsoleClassPolicy = {
      class_name: meta.className,
      accessible,
      ...(typeof described.reason === 'string' ? { reason: described.reason } : {}),
      fields_given: [],
      fields_withheld: [],
      not_allowlisted_count: 0,
      tenant_scope: (described.tenant_scope as ConsoleClassPolicy['tenant_scope']) ?? null,
      canonical_filter: described.agent_canonical_filter ?? null,
      agent_filter_fields: Object.keys((described.per_agent_filter as object | null) ?? {}).sort(),
      methods: (described.agent_methods as string[]) ?? [],
      tools_refused: [],
    };
    if (accessible) {
      await addFields(entry, agent, services, meta.fields, options.operator);
      for (const tool of classTools) {
        const decision = agent.wouldPermit(tool.name, { className: meta.className });
        if (!decision.allowed)
          entry.tools_refused.push({
            tool: tool.name,
            reason: decision.reason,
            denied_at: decision.denied_at,
          });
      }
    }
    classes.push(entry);
  }
  return { classes, tools, unnamed_refused_tools: every.length - tools.length };
}

async function addFields(
  entry: ConsoleClassPolicy,
  agent: ParseAgent,
  services: AgentServices,
  allowlist: readonly string[] | undefined,
  operator: boolean,
): Promise<void> {
  const schema = await agent.access.schema(entry.class_name);
  if (!schema) return;
  const hidden = new Set(await protectedFieldsOf(agent, services, entry.class_name));
  for (const name of Object.keys(schema.fields).sort()) {
    if (isInternalField(name)) continue;
    if (allowlist && !allowlist.includes(name)) {
      entry.not_allowlisted_count++;
      if (operator) entry.fields_withheld.push({ name, reason: 'not_allowlisted' });
    } else if (hidden.has(name)) {
      entry.fields_withheld.push({ name, reason: 'protected' });
    } else {
      entry.fields_given.push(name);
    }
  }
  if (!operator) entry.fields_withheld.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The fields Parse's protectedFields hide from this agent: from a direct path that computes them
 * per reader when one serves this identity, else every field any protectedFields entry lists (a
 * role or pointer entry may lift some for this user; shown as withheld, the safe side).
 */
async function protectedFieldsOf(
  agent: ParseAgent,
  services: AgentServices,
  className: string,
): Promise<string[]> {
  if (agent.usingMasterKey) return [];
  for (const operation of PROTECTED_FIELD_SOURCES) {
    if (!services.data.serves(operation, agent)) continue;
    const path = services.data.pathFor(operation, agent);
    if (path.protectedFields) return path.protectedFields(className);
  }
  const clp = (await agent.access.schema(className))?.classLevelPermissions as
    { protectedFields?: Record<string, unknown> } | undefined;
  const out = new Set<string>();
  for (const list of Object.values(clp?.protectedFields ?? {}))
    if (Array.isArray(list)) for (const f of list) if (typeof f === 'string') out.add(f);
  return [...out];
}

function takesClassName(schema: unknown): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return Boolean(properties && 'class_name' in properties);
}
