import { secretFingerprint } from '../core/secret-display';
import type { MetadataRegistry } from '../metadata/metadata-registry';
import type { ModelClass } from '../metadata/metadata.types';
import type { Where } from '../query/constraint-translator';
import type { NormalizedListFilter } from '../security/class-filter';
import { describeAgentMethods } from '../tools/builtin/mutation/agent-method-gate';
import type { ToolDefinition } from '../tools/tool-definition';
import type { ToolDefinitionsOptions } from './agent-options';
import type { GatedAgent } from './agent-gates';

/**
 * What operators can read about an agent (describe, describeFor, toolDefinitions): every layer
 * that gates it, never a secret. Pure functions of the agent's settings.
 */
export interface IntrospectedAgent extends GatedAgent {
  readonly confirmationRequired: boolean;
  readonly agentDepth: number;
  readonly correlationId?: string;
  filterFor(cls: string | ModelClass): Where | undefined;
}

/** The agent's settings describe() reports that the agent keeps to itself. */
export interface IntrospectedSettings {
  metadata: MetadataRegistry;
  toolFilter?: NormalizedListFilter;
  classFilter?: NormalizedListFilter;
  methodFilter?: NormalizedListFilter;
  filters: Readonly<Record<string, Where>>;
  strictModes: { toolFilter: boolean; classFilter: boolean };
}

/** What an agent sees of one class: access, tenant binding, allowlist, filters. */
export function describeAgentFor(
  agent: IntrospectedAgent,
  metadata: MetadataRegistry,
  cls: string | ModelClass,
): Record<string, unknown> {
  const className = metadata.resolveClassName(cls);
  const meta = metadata.get(className);
  let accessible = true;
  let reason: string | undefined;
  try {
    agent.access.assertClassAccessible(className);
  } catch (error) {
    accessible = false;
    reason = (error as Error).message;
  }
  let tenant: unknown = null;
  try {
    tenant = agent.access.tenant(className) ?? null;
  } catch (error) {
    reason ??= (error as Error).message;
    accessible = false;
  }
  const filter = agent.filterFor(className) ?? null;
  return {
    class_name: className,
    accessible: accessible ? 'permitted' : 'denied',
    ...(reason ? { reason } : {}),
    tenant_scope: tenant,
    agent_fields: meta?.fields ?? null,
    agent_canonical_filter: meta?.canonicalFilter ?? null,
    per_agent_filter: filter,
    large_fields: meta?.largeFields ?? [],
    agent_methods: accessible
      ? describeAgentMethods(agent, agent.access, className).map((m) => m.name as string)
      : [],
  };
}

/** Every layer that gates the agent, for operators (see ParseAgent.describe). */
export function describeAgent(
  agent: IntrospectedAgent,
  settings: IntrospectedSettings,
  describeFor: (className: string) => Record<string, unknown>,
): Record<string, unknown> {
  const { metadata } = settings;
  const perClass: Record<string, unknown> = {};
  for (const meta of metadata.all()) {
    const entry = describeFor(meta.className);
    perClass[meta.className] = {
      accessible: entry.accessible,
      ...(entry.reason ? { reason: entry.reason } : {}),
      agent_methods: entry.agent_methods,
    };
  }
  const allowed = agent.allowedTools();
  return {
    agent_id: agent.agentId,
    permissions: agent.permissions,
    auth: {
      mode: agent.authType,
      ...(agent.sessionToken ? { fingerprint: secretFingerprint(agent.sessionToken) } : {}),
    },
    // Kept from the earlier shape: dashboards read them.
    auth_type: agent.authType,
    using_master_key: agent.usingMasterKey,
    client_mode: agent.clientMode,
    allow_mutations: agent.allowMutations,
    confirmation_required: agent.confirmationRequired,
    tenant_id: agent.tenantId ?? null,
    agent_depth: agent.agentDepth,
    allowed_tools: allowed,
    classes: filterSummary(settings.classFilter),
    tools: { ...filterSummary(settings.toolFilter), effective: agent.allowedTools() },
    methods: filterSummary(settings.methodFilter),
    filters: Object.fromEntries(
      Object.entries(settings.filters).map(([k, w]) => [k, Object.keys(w).sort()]),
    ),
    hidden_classes: metadata
      .hiddenClassNames()
      .filter((c) => metadata.isHidden(c, agent.usingMasterKey))
      .sort(),
    per_class: perClass,
    strict_modes: {
      tool_filter: settings.strictModes.toolFilter,
      class_filter: settings.strictModes.classFilter,
    },
    correlation_id: agent.correlationId ?? null,
  };
}

/** Tool definitions in MCP shape (as registered) or an LLM provider's. */
export function formatToolDefinitions(
  tools: ToolDefinition[],
  options: ToolDefinitionsOptions,
): Array<ToolDefinition & Record<string, unknown>> {
  const wanted = options.category?.toLowerCase();
  const chosen = tools.filter((t) => !wanted || t.category.toLowerCase() === wanted);
  if (options.format === 'openai') {
    return chosen.map((t) => ({
      ...t,
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
  }
  if (options.format === 'anthropic') {
    return chosen.map((t) => ({ ...t, input_schema: t.inputSchema }));
  }
  return chosen as Array<ToolDefinition & Record<string, unknown>>;
}

function filterSummary(filter?: NormalizedListFilter): {
  only: string[] | null;
  except: string[] | null;
} {
  return {
    only: filter?.only ? [...filter.only].sort() : null,
    except: filter?.except.size ? [...filter.except].sort() : null,
  };
}
