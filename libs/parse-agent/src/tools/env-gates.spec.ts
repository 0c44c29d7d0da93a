import {
  ENV_GATES,
  envGateRefusal,
  gateEnabled,
  isTruthyEnv,
  methodEnvGate,
  type ToolEnvGate,
} from './env-gates';

describe('isTruthyEnv', () => {
  it.each(['1', 'true', 'TRUE', 'True', 'yes', 'YES', 'on', 'On', ' true ', 'yes\n'])(
    'reads %p as on',
    (value) => expect(isTruthyEnv(value)).toBe(true),
  );

  it.each([undefined, '', '0', 'false', 'no', 'off', 'enabled', 'y', '2', 'yes please', 'truee'])(
    'reads %p as off',
    (value) => expect(isTruthyEnv(value)).toBe(false),
  );
});

describe('gateEnabled', () => {
  it('reads the named variable from the given environment', () => {
    expect(gateEnabled('writeTools', { PARSE_AGENT_ALLOW_WRITE_TOOLS: 'on' })).toBe(true);
    expect(gateEnabled('writeTools', { PARSE_AGENT_ALLOW_RAW_CRUD: 'on' })).toBe(false);
    expect(gateEnabled('rawSchema', {})).toBe(false);
  });

  it('reads process.env by default', () => {
    const saved = process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS;
    try {
      process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS = 'yes';
      expect(gateEnabled('schemaOps')).toBe(true);
      delete process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS;
      expect(gateEnabled('schemaOps')).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS;
      else process.env.PARSE_AGENT_ALLOW_SCHEMA_OPS = saved;
    }
  });

  it('names the four switches exactly', () => {
    expect(ENV_GATES).toEqual({
      writeTools: 'PARSE_AGENT_ALLOW_WRITE_TOOLS',
      schemaOps: 'PARSE_AGENT_ALLOW_SCHEMA_OPS',
      rawCrud: 'PARSE_AGENT_ALLOW_RAW_CRUD',
      rawSchema: 'PARSE_AGENT_ALLOW_RAW_SCHEMA',
    });
  });
});

/** How the raw write/schema tools declare their gates on their definitions. */
const gated = (name: string): { name: string; envGate?: ToolEnvGate } => ({
  name,
  envGate: ['create_object', 'update_object', 'delete_object'].includes(name)
    ? 'rawCrud'
    : ['create_class', 'delete_class'].includes(name)
      ? 'rawSchema'
      : undefined,
});

describe('envGateRefusal', () => {
  const allOn = {
    PARSE_AGENT_ALLOW_WRITE_TOOLS: 'true',
    PARSE_AGENT_ALLOW_RAW_CRUD: 'true',
    PARSE_AGENT_ALLOW_SCHEMA_OPS: 'true',
    PARSE_AGENT_ALLOW_RAW_SCHEMA: 'true',
  };

  it('never gates read tools or agent methods', () => {
    for (const tool of ['query_class', 'get_object', 'call_method', 'aggregate', 'unknown_tool']) {
      expect(envGateRefusal(gated(tool), false, {})).toBeUndefined();
    }
  });

  describe.each(['create_object', 'update_object', 'delete_object'])('raw CRUD tool %s', (tool) => {
    it('lists every missing requirement joined by AND and recommends an agent method', () => {
      const message = envGateRefusal(gated(tool), false, {})!;
      expect(message).toBe(
        `'${tool}' is a raw CRUD tool and is disabled. It needs PARSE_AGENT_ALLOW_WRITE_TOOLS=true AND PARSE_AGENT_ALLOW_RAW_CRUD=true AND allowMutations: true (agent option). Prefer a declared agent method (@AgentMethod) for domain writes.`,
      );
    });

    it('lists only the requirements still missing', () => {
      const onlyRawCrud = envGateRefusal(gated(tool), true, {
        PARSE_AGENT_ALLOW_WRITE_TOOLS: '1',
      })!;
      expect(onlyRawCrud).toContain('It needs PARSE_AGENT_ALLOW_RAW_CRUD=true.');
      expect(onlyRawCrud).not.toContain('PARSE_AGENT_ALLOW_WRITE_TOOLS');
      expect(onlyRawCrud).not.toContain('allowMutations');

      const onlyMutations = envGateRefusal(gated(tool), false, allOn)!;
      expect(onlyMutations).toContain('It needs allowMutations: true (agent option).');
      expect(onlyMutations).not.toContain('PARSE_AGENT_ALLOW');
    });

    it('does not ask for the schema switches', () => {
      expect(envGateRefusal(gated(tool), false, {})).not.toContain('SCHEMA');
    });

    it('runs when both switches are on and the agent allows mutations', () => {
      expect(envGateRefusal(gated(tool), true, allOn)).toBeUndefined();
      expect(
        envGateRefusal(gated(tool), true, {
          PARSE_AGENT_ALLOW_WRITE_TOOLS: 'YES',
          PARSE_AGENT_ALLOW_RAW_CRUD: 'on',
        }),
      ).toBeUndefined();
    });

    it('stays closed for values that are not truthy', () => {
      expect(
        envGateRefusal(gated(tool), true, {
          PARSE_AGENT_ALLOW_WRITE_TOOLS: 'false',
          PARSE_AGENT_ALLOW_RAW_CRUD: 'enabled',
        }),
      ).toContain('PARSE_AGENT_ALLOW_WRITE_TOOLS=true AND PARSE_AGENT_ALLOW_RAW_CRUD=true.');
    });
  });

  describe.each(['create_class', 'delete_class'])('raw schema tool %s', (tool) => {
    it('lists both missing switches and says it changes the whole schema', () => {
      expect(envGateRefusal(gated(tool), true, {})).toBe(
        `'${tool}' is a raw schema tool and is disabled: it changes the whole application's schema. It needs PARSE_AGENT_ALLOW_SCHEMA_OPS=true AND PARSE_AGENT_ALLOW_RAW_SCHEMA=true.`,
      );
    });

    it('lists only the missing switch and never asks for allowMutations or the CRUD switches', () => {
      const message = envGateRefusal(gated(tool), false, { PARSE_AGENT_ALLOW_SCHEMA_OPS: 'on' })!;
      expect(message).toContain('It needs PARSE_AGENT_ALLOW_RAW_SCHEMA=true.');
      expect(message).not.toContain('SCHEMA_OPS');
      expect(message).not.toContain('allowMutations');
      expect(message).not.toContain('CRUD');
    });

    it('runs when both schema switches are on, whatever allowMutations says', () => {
      expect(
        envGateRefusal(gated(tool), false, {
          PARSE_AGENT_ALLOW_SCHEMA_OPS: 'true',
          PARSE_AGENT_ALLOW_RAW_SCHEMA: '1',
        }),
      ).toBeUndefined();
    });
  });
});

describe('agent method gates', () => {
  it('needs PARSE_AGENT_ALLOW_WRITE_TOOLS for write methods and _SCHEMA_OPS for admin ones', () => {
    expect(methodEnvGate('readonly')).toBeUndefined();
    const write = { name: 'Order.refund', envGate: methodEnvGate('write') };
    const admin = { name: 'Customer.anonymize', envGate: methodEnvGate('admin') };
    expect(envGateRefusal(write, false, {})).toContain('PARSE_AGENT_ALLOW_WRITE_TOOLS=true');
    expect(envGateRefusal(write, false, { PARSE_AGENT_ALLOW_WRITE_TOOLS: '1' })).toBeUndefined();
    expect(envGateRefusal(admin, false, { PARSE_AGENT_ALLOW_WRITE_TOOLS: '1' })).toContain(
      'PARSE_AGENT_ALLOW_SCHEMA_OPS=true',
    );
    expect(envGateRefusal(admin, false, { PARSE_AGENT_ALLOW_SCHEMA_OPS: 'yes' })).toBeUndefined();
  });
});
