import { BUILTIN_TOOLS } from './builtin';
import { ToolRegistry } from './tool-registry';
import {
  rawCrudEnabled,
  rawSchemaEnabled,
  schemaOpsEnabled,
  toolAllowed,
  toolCategory,
  writeToolsEnabled,
} from './tool-introspection';

describe('gate predicates', () => {
  it('read each switch on its own, truthy spellings only', () => {
    const env = {
      PARSE_AGENT_ALLOW_WRITE_TOOLS: 'true',
      PARSE_AGENT_ALLOW_RAW_CRUD: 'yes',
      PARSE_AGENT_ALLOW_SCHEMA_OPS: '0',
      PARSE_AGENT_ALLOW_RAW_SCHEMA: 'enabled',
    };
    expect(writeToolsEnabled(env)).toBe(true);
    expect(rawCrudEnabled(env)).toBe(true);
    expect(schemaOpsEnabled(env)).toBe(false);
    // Only 1/true/yes/on count: a typo never switches a gate on.
    expect(rawSchemaEnabled(env)).toBe(false);
    expect(rawCrudEnabled({ PARSE_AGENT_ALLOW_RAW_CRUD: 'true' })).toBe(true);
    expect(writeToolsEnabled({})).toBe(false);
  });

  it('read process.env by default', () => {
    const saved = process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS;
    try {
      process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS = 'on';
      expect(schemaOpsEnabled()).toBe(true);
      delete process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS;
      expect(schemaOpsEnabled()).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS;
      else process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS = saved;
    }
  });
});

describe('toolCategory', () => {
  const registry = new ToolRegistry(BUILTIN_TOOLS);
  registry.register({ name: 'ping', description: 'p', handler: () => 'pong' });
  registry.register({ name: 'revenue', description: 'r', category: 'reports', handler: () => 1 });

  it('names the category of built-in and registered tools', () => {
    expect(toolCategory(registry, 'aggregate')).toBe('aggregate');
    expect(toolCategory(registry, 'query_class')).toBe('query');
    expect(toolCategory(registry, 'create_object')).toBe('mutation');
    expect(toolCategory(registry, 'ping')).toBe('custom');
    expect(toolCategory(registry, 'revenue')).toBe('reports');
  });

  it('answers undefined for an unknown name or a non-string', () => {
    expect(toolCategory(registry, 'unknown_xyz')).toBeUndefined();
    expect(toolCategory(registry, undefined as never)).toBeUndefined();
  });
});

describe('toolAllowed', () => {
  const agent = { allowedTools: () => ['query_class', 'count_objects'] };

  it('is true exactly for the agent’s allowed tools', () => {
    expect(toolAllowed(agent, 'query_class')).toBe(true);
    expect(toolAllowed(agent, 'delete_object')).toBe(false);
    expect(toolAllowed(agent, 'QUERY_CLASS')).toBe(false);
    expect(toolAllowed(agent, 42 as never)).toBe(false);
  });
});
