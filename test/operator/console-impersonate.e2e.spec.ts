import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentDescription,
  bindAgentToPrincipal,
  ParseAgentAuthGuard,
  ParseAgentConsoleModule,
  ParseAgentModule,
  ParseClass,
} from 'nestjs-parse-agent';
import { suppressSecurityBanners } from 'nestjs-parse-agent/core/security-banner';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { createObject, createUser, type SeededUser } from '../harness/fixtures';
import { parseRest, testParseConnection } from '../harness/parse-rest';

const suffix = randomBytes(4).toString('hex');
const NOTE = `ConsoleImpNote${suffix}`;
const OPERATOR_KEY = `console-imp-${suffix}`;

@ParseClass(NOTE)
@AgentDescription('Notes for the console impersonation suite.')
class ConsoleImpNote {}

/**
 * Issue 36 item 1, the console: the operator's view acts as a user with
 * `X-Parse-Agent-Impersonate`, and then sees what that user's session sees (checked against Parse
 * REST); a user sending the header is refused, never served.
 */
describe('console operator view acting as a user', () => {
  let app: INestApplication;
  let alice: SeededUser;
  let bob: SeededUser;

  beforeAll(async () => {
    suppressSecurityBanners();
    alice = await createUser(`cimp-alice-${suffix}`);
    bob = await createUser(`cimp-bob-${suffix}`);
    await createObject(NOTE, { title: 'alice' }, { [alice.objectId]: { read: true } });
    await createObject(NOTE, { title: 'bob' }, { [bob.objectId]: { read: true } });
    await createObject(NOTE, { title: 'public' }, { '*': { read: true } });
    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: [ConsoleImpNote],
          rateLimiter: { check: () => undefined },
          suppressSecurityBanners: true,
          startupCheck: 'off',
          auth: { apiKey: OPERATOR_KEY },
          agentFactory: bindAgentToPrincipal({ requireTenant: false }),
          mcp: { path: '/mcp', guards: [ParseAgentAuthGuard] },
        }),
        ParseAgentConsoleModule.forRoot({ path: '/console', guards: [ParseAgentAuthGuard] }),
      ],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app?.close());

  const titles = (rows: Array<{ title?: unknown }>) => rows.map((r) => r.title).sort();

  it('the operator acts as alice: identity and rows are hers, as Parse REST gives them', async () => {
    const http = request(app.getHttpServer());
    const identity = await http
      .get('/console/api/identity')
      .set('X-MCP-API-Key', OPERATOR_KEY)
      .set('X-Parse-Agent-Impersonate', alice.objectId);
    expect(identity.status).toBe(200);
    expect(identity.body.agent.auth).toMatchObject({
      mode: 'session_token',
      impersonating: { user: alice.objectId, label: 'console operator' },
    });
    const run = await http
      .post(`/console/api/tools/query_class`)
      .set('X-MCP-API-Key', OPERATOR_KEY)
      .set('X-Parse-Agent-Impersonate', alice.objectId)
      .send({ arguments: { class_name: NOTE } });
    expect(run.body).toMatchObject({ success: true });
    const rows = run.body.data.results as Array<{ title?: unknown }>;
    const truth = await parseRest<{ results: Array<{ title?: unknown }> }>(
      'GET',
      `/classes/${NOTE}`,
      undefined,
      { sessionToken: alice.sessionToken },
    );
    expect(titles(rows)).toEqual(titles(truth.results));
    expect(titles(rows)).toEqual(['alice', 'public']);
  });

  it('a user sending the header is refused; a non-_User target is refused', async () => {
    const http = request(app.getHttpServer());
    const asUser = await http
      .get('/console/api/identity')
      .set('Authorization', `Bearer ${bob.sessionToken}`)
      .set('X-Parse-Agent-Impersonate', alice.objectId);
    // Bob himself is served (the header is what is refused).
    const plainUser = await http
      .get('/console/api/identity')
      .set('Authorization', `Bearer ${bob.sessionToken}`);
    expect(plainUser.status).toBe(200);
    expect(asUser.status).toBe(403);
    const unknown = await http
      .get('/console/api/identity')
      .set('X-MCP-API-Key', OPERATOR_KEY)
      .set('X-Parse-Agent-Impersonate', 'NoSuchUser7');
    expect(unknown.status).toBe(403);
    const bad = await http
      .get('/console/api/identity')
      .set('X-MCP-API-Key', OPERATOR_KEY)
      .set('X-Parse-Agent-Impersonate', 'not an id');
    expect(bad.status).toBe(400);
  });
});
