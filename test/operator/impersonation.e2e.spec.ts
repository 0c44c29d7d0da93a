import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AccessDeniedError,
  AgentEvents,
  ParseAgentConfigError,
  ParseAgentFactory,
  ParseAgentModule,
  ParseClass,
  type ParseAgent,
  type ToolCallEvent,
} from 'nestjs-parse-agent';
import { routeSecurityBanners } from 'nestjs-parse-agent/core/security-banner';
import { randomBytes } from 'node:crypto';
import { createObject, createUser, defineClass, type SeededUser } from '../harness/fixtures';
import { parseRest, testParseConnection } from '../harness/parse-rest';

const suffix = randomBytes(4).toString('hex');
const NOTE = `ImpNote${suffix}`;

@ParseClass(NOTE)
class ImpNote {}

type Row = Record<string, unknown>;

/** The user fields of a row as a set of names (system columns and ACL aside). */
const userFields = (row: Row) =>
  Object.keys(row)
    .filter((k) => !['objectId', 'createdAt', 'updatedAt', 'ACL'].includes(k))
    .sort();

/**
 * Issue 36 item 1, against the real Parse Server: an impersonating agent answers exactly what
 * Parse REST answers for a session of that user (rows by ACL, protectedFields withheld by Parse
 * itself), a failed impersonation leaves the agent as it was, and only a master-key agent may
 * impersonate, only a _User.
 */
describe('impersonation with a real Parse session', () => {
  let app: INestApplication;
  let factory: ParseAgentFactory;
  let alice: SeededUser;
  let bob: SeededUser;
  let dave: SeededUser;
  const audit: string[] = [];
  const events: ToolCallEvent[] = [];

  beforeAll(async () => {
    alice = await createUser(`imp-alice-${suffix}`);
    bob = await createUser(`imp-bob-${suffix}`);
    dave = await createUser(`imp-dave-${suffix}`);
    // Dave has no session at all: his sign-up session is deleted.
    const sessions = await parseRest<{ results: Array<{ objectId: string }> }>(
      'GET',
      `/classes/_Session?where=${encodeURIComponent(JSON.stringify({ user: { __type: 'Pointer', className: '_User', objectId: dave.objectId } }))}`,
      undefined,
      { masterKey: true },
    );
    for (const s of sessions.results)
      await parseRest('DELETE', `/classes/_Session/${s.objectId}`, undefined, { masterKey: true });
    await defineClass(
      NOTE,
      { title: { type: 'String' }, secret: { type: 'String' }, rank: { type: 'Number' } },
      {
        find: { '*': true },
        get: { '*': true },
        count: { '*': true },
        create: { '*': true },
        update: { '*': true },
        delete: { '*': true },
        addField: {},
        protectedFields: { '*': ['secret'] },
      },
    );
    const own = (user: SeededUser) => ({ [user.objectId]: { read: true, write: true } });
    let rank = 0;
    for (const [title, acl] of [
      ['alice-1', own(alice)],
      ['alice-2', own(alice)],
      ['bob-1', own(bob)],
      ['dave-1', own(dave)],
      ['public', { '*': { read: true } }],
    ] as const) {
      await createObject(NOTE, { title, secret: `s-${title}`, rank: ++rank }, acl);
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: [ImpNote],
          rateLimiter: { check: () => undefined },
          suppressSecurityBanners: true,
          startupCheck: 'off',
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    factory = app.get(ParseAgentFactory);
    // After init: the module routes security lines to its logger as it starts.
    routeSecurityBanners((line) => audit.push(line));
    app.get(AgentEvents).toolCalls$.subscribe((e) => events.push(e));
  });

  afterAll(async () => {
    routeSecurityBanners(() => undefined);
    await app?.close();
  });

  async function agentRows(agent: ParseAgent): Promise<Row[]> {
    const envelope = await agent.execute('query_class', {
      class_name: NOTE,
      order: 'rank',
      limit: 100,
    });
    if (!envelope.success) throw new Error(JSON.stringify(envelope));
    return (envelope.data as { results: Row[] }).results;
  }

  async function restRows(sessionToken: string): Promise<Row[]> {
    const res = await parseRest<{ results: Row[] }>(
      'GET',
      `/classes/${NOTE}?order=rank&limit=100`,
      undefined,
      { sessionToken },
    );
    return res.results;
  }

  /** The agent's answer equals Parse REST's for the same session, row by row, field by field. */
  async function expectSameAsRest(agent: ParseAgent, sessionToken: string) {
    const [mine, truth] = [await agentRows(agent), await restRows(sessionToken)];
    expect(mine.map((r) => r.objectId)).toEqual(truth.map((r) => r.objectId));
    expect(mine.map(userFields)).toEqual(truth.map(userFields));
    expect(mine.map((r) => r.title)).toEqual(truth.map((r) => r.title));
    return mine;
  }

  it('acts as the user: the same rows and fields Parse REST gives that user’s session', async () => {
    const agent = factory.create();
    const before = await agentRows(agent);
    expect(before.map((r) => r.title)).toEqual(['alice-1', 'alice-2', 'bob-1', 'dave-1', 'public']);
    await agent.impersonate(alice.objectId, { label: 'support: ticket 4411' });
    expect(agent.authType).toBe('session_token');
    const rows = await expectSameAsRest(agent, alice.sessionToken);
    expect(rows.map((r) => r.title)).toEqual(['alice-1', 'alice-2', 'public']);
    // protectedFields are Parse's own doing here: the master key saw `secret`, the user does not.
    expect(before[0]).toHaveProperty('secret');
    for (const row of rows) expect(row).not.toHaveProperty('secret');

    expect(agent.impersonation).toEqual({
      user: alice.objectId,
      label: 'support: ticket 4411',
      minted: false,
    });
    expect(agent.describe()).toMatchObject({
      auth: {
        mode: 'session_token',
        impersonating: { user: alice.objectId, label: 'support: ticket 4411' },
      },
    });
    expect(agent.describe({ format: 'text' })).toContain(`impersonating _User ${alice.objectId}`);
    const event = events.filter((e) => e.agent_id === agent.agentId).at(-1)!;
    expect(event).toMatchObject({
      auth_type: 'session_token',
      using_master_key: false,
      impersonated_user: alice.objectId,
      impersonation_label: 'support: ticket 4411',
    });
    expect(
      audit.some((l) => l.includes('AUDIT impersonation started') && l.includes(alice.objectId)),
    ).toBe(true);
    expect(
      audit.some(
        (l) => l.includes('AUDIT impersonated call query_class') && l.includes(alice.objectId),
      ),
    ).toBe(true);
    expect(JSON.stringify(audit)).not.toContain(alice.sessionToken);

    // Switching to Bob, then back to the master key.
    await agent.impersonate({ __type: 'Pointer', className: '_User', objectId: bob.objectId });
    expect((await expectSameAsRest(agent, bob.sessionToken)).map((r) => r.title)).toEqual([
      'bob-1',
      'public',
    ]);
    await agent.stopImpersonating();
    expect(agent.authType).toBe('master_key');
    expect(agent.impersonation).toBeUndefined();
    expect((await agentRows(agent)).map((r) => r.title)).toEqual(before.map((r) => r.title));
  });

  /** Who the agent is, as far as a caller can tell. */
  const identityOf = (agent: ParseAgent) => ({
    authType: agent.authType,
    sessionToken: agent.sessionToken,
    impersonation: agent.impersonation,
    auth: agent.describe().auth,
  });

  it('a failed impersonation leaves the agent exactly as it was', async () => {
    for (const start of [undefined, alice.objectId]) {
      const agent = factory.create();
      if (start) await agent.impersonate(start, { label: 'first' });
      const was = identityOf(agent);
      const rowsBefore = await agentRows(agent);
      const failures: Array<[unknown, RegExp]> = [
        [dave.objectId, /has no active session/],
        ['NoSuchUser1', /no _User NoSuchUser1/],
        [{ className: 'ImpNote', objectId: alice.objectId }, /only a _User can be impersonated/],
        [{ className: '_Role', objectId: bob.objectId }, /only a _User can be impersonated/],
        ['not an id!', /must be a _User objectId/],
      ];
      for (const [target, message] of failures) {
        await expect(agent.impersonate(target as string)).rejects.toThrow(message);
        expect(identityOf(agent)).toEqual(was);
      }
      expect(await agentRows(agent)).toEqual(rowsBefore);
    }
  });

  it('a non-_User target is refused as access_denied, before any lookup', async () => {
    const agent = factory.create();
    await expect(
      agent.impersonate({ className: 'Order', objectId: alice.objectId }),
    ).rejects.toBeInstanceOf(AccessDeniedError);
  });

  it('only an agent built with the master key may impersonate', async () => {
    const session = factory.create({ sessionToken: bob.sessionToken });
    await expect(session.impersonate(alice.objectId)).rejects.toThrow(
      /only an agent created with the master key may impersonate/,
    );
    expect(session.sessionToken).toBe(bob.sessionToken);
    await expectSameAsRest(session, bob.sessionToken);
    // A sub-agent of an impersonating agent acts for the same user and cannot switch.
    const parent = await factory.create().impersonate(alice.objectId, { label: 'parent' });
    const child = parent.subAgent();
    expect(child.impersonation).toEqual({ user: alice.objectId, label: 'parent', minted: false });
    await expect(child.impersonate(bob.objectId)).rejects.toBeInstanceOf(AccessDeniedError);
    await expectSameAsRest(child, alice.sessionToken);
  });

  it('mint: true creates a restricted short-lived session, revoked when impersonation stops', async () => {
    const agent = factory.create();
    await agent.impersonate(dave.objectId, { mint: true, label: 'minted' });
    const token = agent.sessionToken!;
    expect(agent.impersonation).toMatchObject({ user: dave.objectId, minted: true });
    // Parse Server itself accepts the minted token as Dave.
    const me = await parseRest<{ objectId: string }>('GET', '/users/me', undefined, {
      sessionToken: token,
    });
    expect(me.objectId).toBe(dave.objectId);
    const rows = await expectSameAsRest(agent, token);
    expect(rows.map((r) => r.title)).toEqual(['dave-1', 'public']);
    const [session] = (
      await parseRest<{ results: Row[] }>(
        'GET',
        `/classes/_Session?where=${encodeURIComponent(JSON.stringify({ sessionToken: token }))}`,
        undefined,
        { masterKey: true },
      )
    ).results;
    expect(session).toMatchObject({ restricted: true });
    const expires = Date.parse((session.expiresAt as { iso: string }).iso);
    expect(expires - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    await agent.stopImpersonating();
    await expect(
      parseRest('GET', '/users/me', undefined, { sessionToken: token }),
    ).rejects.toThrow();
    expect(agent.sessionToken).toBeUndefined();
  });

  it('the impersonate option: refused by create(), resolved by createValidated()', async () => {
    expect(() => factory.create({ impersonate: { user: alice.objectId } })).toThrow(
      ParseAgentConfigError,
    );
    expect(() =>
      factory.create({ impersonate: { user: alice.objectId, mint: 'yes' as never } }),
    ).toThrow(/impersonate.mint must be true or false/);
    const agent = await factory.createValidated({
      impersonate: { user: alice.objectId, label: 'option' },
    });
    expect(agent.impersonation).toMatchObject({ user: alice.objectId, label: 'option' });
    await expectSameAsRest(agent, alice.sessionToken);
    await expect(factory.createValidated({ impersonate: { user: dave.objectId } })).rejects.toThrow(
      /has no active session/,
    );
    await expect(
      factory.createValidated({
        sessionToken: bob.sessionToken,
        impersonate: { user: alice.objectId },
      }),
    ).rejects.toBeInstanceOf(AccessDeniedError);
  });
});
