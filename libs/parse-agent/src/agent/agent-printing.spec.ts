import { format, inspect } from 'node:util';
import {
  createAgentServices,
  type StandaloneAgentServices,
} from '../composition/create-agent-services';
import { printAs, printClassAs, secretFingerprint } from '../core/secret-display';
import { suppressSecurityBanners } from '../core/security-banner';
import type { RateLimiter } from '../ports/rate-limiter';
import { ParseAgent } from './parse-agent';

const TOKEN = 'r:5f2c0e7a9b1d4c3e8f6a0b2d4c6e8f1a';
const MASTER_KEY = 'master-key-never-printed';

/** Every way a value reaches a log by accident. */
const printed = (value: unknown): string[] => [
  inspect(value),
  inspect(value, { depth: Infinity, showHidden: true }),
  format('%o', value),
  format('%O', value),
  format('%s', value),
  format('%j', value),
  JSON.stringify(value),
];

/** Every 8-character run of the token: a printed slice of it counts as a leak too. */
const tokenPieces = (token: string): string[] =>
  Array.from({ length: token.length - 7 }, (_, i) => token.slice(i, i + 8));

describe('printing an agent (issue 31, item 5)', () => {
  let standalone: StandaloneAgentServices;
  const keys: string[] = [];
  const recording: RateLimiter = {
    check: (key: string) => {
      keys.push(key);
    },
  };

  beforeAll(() => {
    suppressSecurityBanners();
    standalone = createAgentServices({
      parse: { serverURL: 'http://127.0.0.1:9/parse', appId: 'app', masterKey: MASTER_KEY },
      rateLimiter: recording,
    });
  });
  afterAll(() => standalone.close());

  it('shows the session token as a fingerprint in every printed form, and keeps it usable', () => {
    const agent = new ParseAgent({ sessionToken: TOKEN, tenantId: 'acme' }, standalone.services);
    for (const text of printed(agent)) {
      for (const piece of tokenPieces(TOKEN)) expect(text).not.toContain(piece);
      expect(text).not.toContain(MASTER_KEY);
    }
    expect(inspect(agent)).toContain(`sha256:${secretFingerprint(TOKEN)}`);
    expect(JSON.parse(JSON.stringify(agent))).toMatchObject({
      auth_type: 'session_token',
      session_token: `sha256:${secretFingerprint(TOKEN)}`,
      tenant_id: 'acme',
    });
    // Not an own property: a spread or Object.entries of the agent does not carry it either.
    expect(Object.values({ ...agent })).not.toContain(TOKEN);
    expect(agent.sessionToken).toBe(TOKEN);
  });

  it('keys the shared rate limiter by a digest, never a slice of the token', async () => {
    const agent = new ParseAgent({ sessionToken: TOKEN }, standalone.services);
    await agent.consumeRateLimit();
    await agent.consumeRateLimit();
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    for (const piece of tokenPieces(TOKEN)) expect(keys[0]).not.toContain(piece);
    const other = new ParseAgent({ sessionToken: `${TOKEN}x` }, standalone.services);
    await other.consumeRateLimit();
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('prints the services without the master key', () => {
    // (JSON.stringify refuses the services outright: they are circular.)
    const services = standalone.services;
    for (const text of [
      inspect(services, { depth: Infinity, showHidden: true }),
      format('%o', services),
    ]) {
      expect(text).not.toContain(MASTER_KEY);
    }
  });
});

describe('printAs and printClassAs', () => {
  it('replace every printed form with the view, invisibly to spreads and keys', () => {
    const options = { sessionToken: TOKEN, tools: ['count_objects'] };
    printAs(options, 'AgentOptions', () => ({ ...options, sessionToken: 'hidden' }));
    for (const text of printed(options)) expect(text).not.toContain(TOKEN);
    expect(inspect(options)).toMatch(/^AgentOptions \{/);
    expect(Object.keys(options)).toEqual(['sessionToken', 'tools']);
    expect({ ...options }).toEqual({ sessionToken: TOKEN, tools: ['count_objects'] });
  });

  it('name a subclass by its own name', () => {
    class Holder {
      constructor(protected readonly key: string) {}
    }
    class SubHolder extends Holder {}
    printClassAs(Holder, () => ({ kind: 'holder' }));
    expect(inspect(new SubHolder(MASTER_KEY))).toBe("SubHolder { kind: 'holder' }");
    expect(JSON.stringify(new Holder(MASTER_KEY))).toBe('{"kind":"holder"}');
  });
});
