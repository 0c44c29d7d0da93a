import { suppressSecurityBanners } from '../core/security-banner';
import { DataRouter } from '../data/data-router';
import type { DataPathProvider } from '../ports/data-path';
import {
  createAgentServices,
  type StandaloneAgentServices,
} from '../composition/create-agent-services';
import { ParseAgent, type AgentOptions } from './parse-agent';

/**
 * What an agent is offered, decided without a server: tier, filters and whether a configured data
 * path can serve each tool's operation for the agent's identity. The Parse REST path here never
 * answers (port 9): nothing below may need it.
 */
const ANALYTICS = ['explain_query', 'aggregate', 'group_by', 'group_by_date', 'distinct'];

/** Stands in for a direct database path: serves every read, binds nothing. */
const directPathStandIn: DataPathProvider = {
  kind: 'direct-stand-in',
  refusal: (operation) => (operation === 'write' ? 'reads only' : undefined),
  bind: () => {
    throw new Error('listing tools must not bind a data path');
  },
};

describe('tools offered per data path and identity', () => {
  let restOnly: StandaloneAgentServices;
  let withDirect: StandaloneAgentServices;
  const restAgent = (options: AgentOptions = {}) => new ParseAgent(options, restOnly.services);
  const directAgent = (options: AgentOptions = {}) => new ParseAgent(options, withDirect.services);
  const parse = { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'unused' };

  beforeAll(() => {
    suppressSecurityBanners();
    restOnly = createAgentServices({ parse });
    withDirect = createAgentServices({ parse, dataPaths: [directPathStandIn] });
  });
  afterAll(() => {
    restOnly.close();
    withDirect.close();
  });

  it('does not offer a session agent on Parse REST alone any aggregate-family tool or explain', () => {
    const agent = restAgent({ sessionToken: 'r:alice' });
    const allowed = agent.allowedTools();
    for (const name of ANALYTICS) expect(allowed).not.toContain(name);
    // Row reads and export (query mode runs on Parse REST) stay.
    expect(allowed).toEqual(
      expect.arrayContaining(['query_class', 'count_objects', 'get_object', 'export_data']),
    );
    const defined = agent.toolDefinitions({ format: 'openai' }).map((t) => t.name);
    expect(defined).toEqual(allowed);
    expect(agent.toolDefinitions({ category: 'aggregate' }).map((t) => t.name)).toEqual([]);
    expect(agent.describe().allowed_tools).toEqual(allowed);
  });

  it('offers the Atlas Search tools only where a path serves search (never on Parse REST)', () => {
    const atlas = ['atlas_text_search', 'atlas_autocomplete', 'atlas_faceted_search'];
    for (const name of atlas) {
      expect(restAgent().allowedTools()).not.toContain(name);
      expect(restAgent({ sessionToken: 'r:alice' }).allowedTools()).not.toContain(name);
    }
    expect(directAgent({ sessionToken: 'r:alice' }).allowedTools()).toEqual(
      expect.arrayContaining(atlas),
    );
  });

  it('offers a master-key agent on Parse REST alone distinct, which REST serves it, and no pipelines', () => {
    const allowed = restAgent().allowedTools();
    expect(allowed).toContain('distinct');
    for (const name of ['aggregate', 'group_by', 'group_by_date', 'explain_query'])
      expect(allowed).not.toContain(name);
  });

  it('offers every analytics tool once a direct path serves the identity', () => {
    for (const options of [{ sessionToken: 'r:alice' }, {}, { aclUser: 'u_alice' }]) {
      expect(directAgent(options).allowedTools()).toEqual(expect.arrayContaining(ANALYTICS));
    }
  });

  it('says in wouldPermit that the deployment, not the tier, keeps a tool out', () => {
    expect(restAgent({ sessionToken: 'r:alice' }).wouldPermit('group_by')).toEqual({
      allowed: false,
      reason: 'invalid_configuration',
      denied_at: 'data_path',
    });
    expect(directAgent({ sessionToken: 'r:alice' }).wouldPermit('group_by')).toEqual({
      allowed: true,
    });
  });

  it('asks the router once per operation for an agent, however often the list is built', () => {
    const serves = jest.spyOn(DataRouter.prototype, 'serves');
    try {
      const agent = restAgent({ sessionToken: 'r:alice' });
      for (let i = 0; i < 5; i++) agent.allowedTools();
      agent.toolDefinitions();
      // Once per data operation a tool needs (analytics, search, ...), never again for a rebuild.
      const asked = serves.mock.calls.map(([operation]) => operation);
      expect(asked.length).toBeGreaterThan(0);
      expect(new Set(asked).size).toBe(asked.length);
    } finally {
      serves.mockRestore();
    }
  });
});

describe('an unknown tool name', () => {
  let standalone: StandaloneAgentServices;

  beforeAll(() => {
    suppressSecurityBanners();
    standalone = createAgentServices({
      parse: { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: 'unused' },
    });
  });
  afterAll(() => standalone.close());

  it('answers unknown_tool with the close names the agent may call, not a permission problem', async () => {
    const agent = new ParseAgent({}, standalone.services);
    const envelope = await agent.execute('count_object', { class_name: 'Order' });
    expect(envelope).toMatchObject({
      success: false,
      error_code: 'unknown_tool',
      error: expect.stringContaining("Unknown tool 'count_object'"),
      details: { kind: 'unknown_tool' },
    });
    if (envelope.success) return;
    // The closest name first.
    expect((envelope.details?.suggestions as string[])[0]).toBe('count_objects');
    expect(envelope.error).toContain('Did you mean count_objects');
    expect(envelope.error).toContain('list_tools');
    expect(envelope.error).not.toMatch(/permission/i);
    expect(agent.wouldPermit('count_object')).toEqual({
      allowed: false,
      reason: 'unknown_tool',
      denied_at: 'tool_registry',
    });
  });

  it('never suggests a tool the agent may not call', async () => {
    // delete_object is admin-only; group_by needs a direct path a session agent lacks here.
    const readonly = new ParseAgent({ sessionToken: 'r:alice' }, standalone.services);
    for (const [typo, hidden] of [
      ['delete_objekt', 'delete_object'],
      ['group_bi', 'group_by'],
    ]) {
      const envelope = await readonly.execute(typo, {});
      expect(envelope).toMatchObject({ success: false, error_code: 'unknown_tool' });
      expect(JSON.stringify(envelope)).not.toContain(hidden);
    }
    const admin = new ParseAgent({ permissions: 'admin' }, standalone.services);
    expect(await admin.execute('delete_objekt', {})).toMatchObject({
      details: { suggestions: ['delete_object'] },
    });
  });

  it('keeps the permission answer for a real tool above the tier', async () => {
    const agent = new ParseAgent({}, standalone.services);
    expect(await agent.execute('delete_object', {})).toMatchObject({
      error_code: 'permission_denied',
      error:
        "Permission denied: 'delete_object' requires admin permissions. Current level: readonly",
    });
  });

  it('answers a long made-up name without suggestions and without echoing all of it', async () => {
    const agent = new ParseAgent({}, standalone.services);
    const envelope = await agent.execute(`count_objects${'x'.repeat(500)}`, {});
    expect(envelope).toMatchObject({ error_code: 'unknown_tool', details: { suggestions: [] } });
    expect(JSON.stringify(envelope).length).toBeLessThan(400);
  });
});
