import { inspect, format } from 'node:util';
import {
  agentOptionsForPrincipal,
  AgentEvents,
  McpApiKeyGuard,
  ParseAgentAuthGuard,
  principalOf,
  type ParseAgent,
  type PolicedToolContext,
  type SecurityEvent,
  type ToolCallEvent,
  type ToolContext,
} from 'nestjs-parse-agent';
import { ParseSessionVerifier } from 'nestjs-parse-agent/auth';
import { setPrincipal } from 'nestjs-parse-agent/auth/parse-agent-principal';
import { PARSE_AGENT_SERVICES } from 'nestjs-parse-agent/nest/parse-agent.constants';
import { PARSE_AGENT_MODULE_OPTIONS } from 'nestjs-parse-agent/nest/parse-agent.module-definition';
import { createAgentTestBed, type AgentTestBed } from '../harness/agent-module';
import { createObject, createUser, resetData } from '../harness/fixtures';
import { parseRest, testParseConfig } from '../harness/parse-rest';

const OPERATOR_KEY = 'operator-key-never-printed-31';

/**
 * Every way a value gets printed or serialized by accident: console.log and loggers (`%o`, `%O`,
 * `%s`, `%j`), util.inspect with and without hidden properties, JSON.stringify, String().
 */
function renderings(value: unknown): Record<string, string> {
  const out: Record<string, string> = {
    inspect: inspect(value),
    inspectDeep: inspect(value, { depth: Infinity, showHidden: true }),
    inspectGetters: inspect(value, { depth: 6, getters: true }),
    percentO: format('%o', value),
    percentCapitalO: format('%O', value),
    percentS: format('%s', value),
    percentJ: format('%j', value),
    string: safe(() => String(value)),
    json: safe(() => JSON.stringify(value) ?? ''),
  };
  if (value instanceof Error) {
    out.stack = value.stack ?? '';
    out.message = value.message;
  }
  return out;
}

function safe(render: () => string): string {
  try {
    return render();
  } catch (error) {
    // A circular structure is not serialized at all: nothing of it is written.
    return `<${(error as Error).name}>`;
  }
}

/**
 * Issue 31, item 5: real agents with a real session token, and every object around them a host
 * may print (the factory, the services, the principal, options, the tool context, errors and
 * events). None of their renderings may contain the live token, the master key or the operator
 * key.
 */
describe('secrets never appear when library objects are printed or serialized', () => {
  let bed: AgentTestBed;
  let token: string;
  let loggedOut: string;
  /** The database password the direct path connects with, when its URI carries one. */
  const databasePassword = () =>
    decodeURIComponent(new URL(testParseConfig().databaseURI).password);
  const secrets = () =>
    [token, loggedOut, testParseConfig().masterKey, OPERATOR_KEY, databasePassword()].filter(
      (secret) => secret.length >= 6,
    );
  const run = Date.now().toString(36);
  const cls = `Inspect_${run}`;

  /** Asserts that no rendering of `value` holds a secret; returns the renderings. */
  function assertClean(label: string, value: unknown): Record<string, string> {
    const shown = renderings(value);
    for (const [form, text] of Object.entries(shown)) {
      for (const secret of secrets()) {
        if (text.includes(secret)) {
          const at = text.indexOf(secret);
          throw new Error(
            `${label} printed a secret through ${form}: …${text.slice(Math.max(0, at - 600), at + 40)}`,
          );
        }
      }
    }
    return shown;
  }

  beforeAll(async () => {
    await resetData();
    token = (await createUser(`inspect_${run}`)).sessionToken;
    const gone = await createUser(`inspect_gone_${run}`);
    loggedOut = gone.sessionToken;
    await parseRest('POST', '/logout', {}, { sessionToken: loggedOut });
    await createObject(cls, { label: 'public row' });
    const { databaseURI } = testParseConfig();
    bed = await createAgentTestBed([], {
      unregisteredClasses: 'visible',
      postgres: { uri: databaseURI },
      auth: { apiKey: OPERATOR_KEY },
      agentFactory: () => ({}),
    });
  }, 60_000);

  afterAll(() => bed?.close());

  it('an agent shows who it acts for by fingerprint only, before and after it reads', async () => {
    const agent = bed.factory.create({ sessionToken: token, tenantId: 'acme' });
    const before = assertClean('a session agent', agent);
    expect(before.inspect).toMatch(/ParseAgent/);
    expect(before.inspect).toMatch(/session_token/);
    expect(before.inspect).toMatch(/sha256:[0-9a-f]{8}/);
    expect(JSON.parse(before.json)).toMatchObject({
      auth_type: 'session_token',
      tenant_id: 'acme',
    });
    // Direct and analytics reads: the paths and caches now hold the token (session lookups).
    expect((await agent.execute('count_objects', { class_name: cls })).success).toBe(true);
    expect((await agent.execute('group_by', { class_name: cls, field: 'label' })).success).toBe(
      true,
    );
    assertClean('a session agent after reading', agent);
    assertClean('its sub-agent', agent.subAgent({}));
    assertClean('its read policy', agent.access);
    assertClean('its description', agent.describe());
    // The token is still the agent's own to use: only printing it is closed.
    expect(agent.sessionToken).toBe(token);
  });

  it('the factory, the module services and the shipped auth parts print no key or token', async () => {
    const services = bed.module.get(PARSE_AGENT_SERVICES);
    const verifier = bed.module.get(ParseSessionVerifier);
    await verifier.verify(token);
    const agent = bed.factory.create({ sessionToken: token });
    await agent.execute('count_objects', { class_name: cls });
    assertClean('ParseAgentFactory', bed.factory);
    assertClean('the agent services', services);
    assertClean('ParseSessionVerifier', verifier);
    // The guards as the host's Nest app builds them: they hold the module options.
    const moduleOptions = bed.module.get(PARSE_AGENT_MODULE_OPTIONS);
    assertClean('McpApiKeyGuard', new McpApiKeyGuard(moduleOptions));
    assertClean('ParseAgentAuthGuard', new ParseAgentAuthGuard(verifier, moduleOptions));
  });

  it('a principal and the options bound from it print a fingerprint, and still work', () => {
    const request = {};
    setPrincipal(request, {
      kind: 'user',
      userId: 'u1',
      username: 'alice',
      sessionToken: token,
      tenantId: 'acme',
    });
    const principal = principalOf(request)!;
    assertClean('the principal', principal);
    assertClean('a request carrying it', request);
    const options = agentOptionsForPrincipal(principal);
    assertClean('the options bound from it', options);
    expect(options.sessionToken).toBe(token);
    // The options still build the user's agent, also when spread by the host.
    expect(bed.factory.create({ ...options, tools: ['count_objects'] }).authType).toBe(
      'session_token',
    );
  });

  it('the context a custom tool receives, and the paths in it, print no token', async () => {
    let seen: { policed?: PolicedToolContext; master?: ToolContext } = {};
    bed.tools.register({
      name: `inspect_probe_${run}`,
      description: 'Captures its context.',
      handler: async (_args, context) => {
        seen.policed = context;
        await context.read.count(cls, {});
        return { ok: true };
      },
    });
    bed.tools.register({
      name: `inspect_master_probe_${run}`,
      description: 'Captures its raw context.',
      access: 'master',
      handler: async (_args, context) => {
        seen.master = context;
        await context.data.count(cls, {}, context.signal);
        return { ok: true };
      },
    });
    const agent = bed.factory.create({ sessionToken: token });
    expect((await agent.execute(`inspect_probe_${run}`, {})).success).toBe(true);
    assertClean('a policed tool context', seen.policed);
    const operator = bed.factory.create({});
    expect((await operator.execute(`inspect_master_probe_${run}`, {})).success).toBe(true);
    assertClean('a master tool context', seen.master);
    assertClean('its bound data path', seen.master!.data);
    seen = {};
  });

  it('errors, envelopes and events from a refused or failing token carry no token', async () => {
    const events = bed.module.get(AgentEvents);
    const calls: ToolCallEvent[] = [];
    const security: SecurityEvent[] = [];
    const subscriptions = [
      events.toolCalls$.subscribe((e) => calls.push(e)),
      events.securityEvents$.subscribe((e) => security.push(e)),
    ];
    try {
      const refused = await bed.factory.createValidated({ sessionToken: loggedOut }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(Error);
      assertClean('the createValidated refusal', refused);

      const agent: ParseAgent = bed.factory.create({ sessionToken: loggedOut });
      const envelope = await agent.execute('query_class', { class_name: cls });
      expect(envelope.success).toBe(false);
      assertClean('the failure envelope', envelope);

      const blank = (() => {
        try {
          bed.factory.create({ sessionToken: ' ' });
        } catch (error) {
          return error;
        }
      })();
      assertClean('the blank-identity refusal', blank);

      const thrown = await agent.execute('count_objects', { class_name: cls });
      assertClean('another failure', thrown);
      await agent.execute('query_class', { class_name: '_Session' });
      expect(calls.length).toBeGreaterThan(0);
      assertClean('tool-call events', calls);
      assertClean('security events', security);
    } finally {
      for (const s of subscriptions) s.unsubscribe();
    }
  });
});
