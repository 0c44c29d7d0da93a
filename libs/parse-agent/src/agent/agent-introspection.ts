import { PROMPT_VERSION } from '../core/constants';
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
  readonly impersonation?: { user: string; label?: string; minted: boolean };
  readonly approvalTiers?: readonly string[];
  readonly approvalTimeoutMs?: number;
  readonly canarySummary?: { count: number; action: string };
  filterFor(cls: string | ModelClass): Where | undefined;
}

/** The agent's settings describe() reports that the agent keeps to itself. */
export interface IntrospectedSettings {
  metadata: MetadataRegistry;
  toolFilter?: NormalizedListFilter;
  toolProfile?: string;
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
      // Whom an aclUser / aclRole agent reads as: an objectId or role name, not a secret.
      ...(agent.aclUser ? { acl_user: agent.aclUser } : {}),
      ...(agent.aclRole ? { acl_role: agent.aclRole } : {}),
      // Whom an impersonating agent acts as, and the operator's label (the token stays hidden).
      ...(agent.impersonation
        ? {
            impersonating: {
              user: agent.impersonation.user,
              label: agent.impersonation.label ?? null,
              minted_session: agent.impersonation.minted,
            },
          }
        : {}),
    },
    // Kept from the earlier shape: dashboards read them.
    auth_type: agent.authType,
    using_master_key: agent.usingMasterKey,
    client_mode: agent.clientMode,
    allow_mutations: agent.allowMutations,
    confirmation_required: agent.confirmationRequired,
    source_provenance: agent.sourceProvenance === true,
    prompt: {
      version: PROMPT_VERSION,
      canaries: agent.canarySummary ?? null,
    },
    approvals: {
      tiers: [...(agent.approvalTiers ?? [])].sort(),
      timeout_ms: agent.approvalTimeoutMs ?? null,
    },
    tenant_id: agent.tenantId ?? null,
    agent_depth: agent.agentDepth,
    allowed_tools: allowed,
    classes: filterSummary(settings.classFilter),
    tools: {
      ...(settings.toolProfile ? { profile: settings.toolProfile } : {}),
      ...filterSummary(settings.toolFilter),
      effective: agent.allowedTools(),
    },
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

const AUTH_MODES: Record<string, string> = {
  master_key: 'the master key',
  session_token: 'a Parse session token',
  acl_user: 'an ACL user',
  acl_role: 'an ACL role',
};

/**
 * describe()'s answer as lines an operator reads in a log or a terminal: who the agent acts for,
 * what it may do, its filters, and one line per registered class. Rendered from the JSON form, so
 * both always say the same.
 */
export function describeAgentText(described: Record<string, unknown>): string {
  const auth = (described.auth ?? {}) as Record<string, unknown>;
  const list = (value: unknown): string =>
    Array.isArray(value) && value.length ? value.join(', ') : '-';
  const filter = (value: unknown): string => {
    const { only, except } = (value ?? {}) as { only?: unknown; except?: unknown };
    if (!only && !except) return 'none';
    return [only ? `only ${list(only)}` : '', except ? `except ${list(except)}` : '']
      .filter(Boolean)
      .join('; ');
  };
  const actsFor = [
    AUTH_MODES[String(auth.mode)] ?? String(auth.mode),
    auth.acl_user ? `'${String(auth.acl_user)}'` : '',
    auth.acl_role ? `'${String(auth.acl_role)}'` : '',
    auth.fingerprint ? `(fingerprint ${String(auth.fingerprint)})` : '',
    auth.impersonating ? impersonatingText(auth.impersonating) : '',
  ]
    .filter(Boolean)
    .join(' ');
  const filters = Object.entries((described.filters ?? {}) as Record<string, string[]>);
  const strict = (described.strict_modes ?? {}) as Record<string, boolean>;
  const tools = (described.tools ?? {}) as Record<string, unknown>;
  const allowed = Array.isArray(described.allowed_tools) ? described.allowed_tools : [];
  const lines = [
    `Agent ${String(described.agent_id)}`,
    `  acts for:        ${actsFor}`,
    `  permissions:     ${String(described.permissions)}${described.client_mode ? ' (client mode)' : ''}`,
    `  tenant:          ${described.tenant_id === null || described.tenant_id === undefined ? 'none' : String(described.tenant_id)}`,
    `  mutations:       ${described.allow_mutations ? 'allowed' : 'not allowed'}; confirmation ${described.confirmation_required ? 'required' : 'not required'}`,
    `  sub-agent depth: ${String(described.agent_depth)}`,
    `  tools:           ${allowed.length} allowed: ${list(allowed)}`,
    `  tool filter:     ${tools.profile ? `profile ${String(tools.profile)}: ` : ''}${filter(tools)}`,
    `  class filter:    ${filter(described.classes)}`,
    `  method filter:   ${filter(described.methods)}`,
    `  row filters:     ${filters.length ? filters.map(([cls, fields]) => `${cls} on ${list(fields)}`).join('; ') : 'none'}`,
    `  strict modes:    tool filter ${strict.tool_filter ? 'on' : 'off'}, class filter ${strict.class_filter ? 'on' : 'off'}`,
    `  hidden classes:  ${list(described.hidden_classes)}`,
    `  correlation id:  ${described.correlation_id === null || described.correlation_id === undefined ? 'none' : String(described.correlation_id)}`,
  ];
  const perClass = Object.entries((described.per_class ?? {}) as Record<string, unknown>);
  if (perClass.length) {
    lines.push('  classes:');
    const width = Math.max(...perClass.map(([name]) => name.length));
    for (const [name, value] of perClass) {
      const entry = value as { accessible?: string; reason?: string; agent_methods?: unknown };
      const methods = Array.isArray(entry.agent_methods) && entry.agent_methods.length;
      lines.push(
        `    ${name.padEnd(width)}  ${String(entry.accessible)}` +
          (methods ? `; methods: ${list(entry.agent_methods)}` : '') +
          (entry.reason ? ` (${entry.reason})` : ''),
      );
    }
  }
  return lines.join('\n');
}

function impersonatingText(value: unknown): string {
  const { user, label, minted_session } = value as Record<string, unknown>;
  return `impersonating _User ${String(user)}${label ? ` (${String(label)})` : ''}${minted_session ? ', minted session' : ''}`;
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
