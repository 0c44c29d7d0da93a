import {
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AgentFields,
  AgentHidden,
  AgentTool,
  AgentUnauthorizedError,
  ParseAgentConsoleModule,
  ParseAgentModule,
  ParseClass,
} from 'nestjs-parse-agent';
import { suppressSecurityBanners, type ConsolePolicy } from 'nestjs-parse-agent/ops';
import { KeyedSlidingWindowRateLimiter } from 'nestjs-parse-agent/stores';
import type { IncomingMessage } from 'node:http';
import request from 'supertest';
import { createObject, createUser, defineClass, resetData } from '../harness/fixtures';
import { testParseConnection } from '../harness/parse-rest';

@ParseClass('ConsoleLedger')
@AgentFields('label', 'amount', 'secretNote')
class ConsoleLedger {}

@ParseClass('ConsoleVault')
@AgentHidden()
class ConsoleVault {}

@Injectable()
class ArchiveTools {
  @AgentTool({
    name: 'purge_archive',
    description: 'Deletes old archives.',
    permission: 'admin',
  })
  purge() {
    return { purged: 0 };
  }
}

/** The host's guard: a session token as a bearer, or the test's operator key. */
class TestGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<IncomingMessage>();
    return Boolean(req.headers.authorization || req.headers['x-operator'] === 'yes');
  }
}

const tokenOf = (req: IncomingMessage) => req.headers.authorization?.replace(/^Bearer /, '');

/**
 * The console's policy API on a Nest app of its own (custom guard, agentFactory and tool) and the
 * real Parse Server: what a user is told and what only the operator sees.
 */
describe('console policy API: a user learns no more names than their MCP client', () => {
  let app: INestApplication;
  let user: string;

  beforeAll(async () => {
    suppressSecurityBanners();
    await resetData();
    await defineClass(
      'ConsoleLedger',
      {
        label: { type: 'String' },
        amount: { type: 'Number' },
        secretNote: { type: 'String' },
        internalCode: { type: 'String' },
      },
      {
        find: { '*': true },
        get: { '*': true },
        count: { '*': true },
        protectedFields: { '*': ['secretNote'] },
      },
    );
    await createObject('ConsoleLedger', {
      label: 'a',
      amount: 1,
      secretNote: 's',
      internalCode: 'x',
    });
    await createObject('ConsoleVault', { secret: 'v' });
    user = (await createUser('console-policy-user')).sessionToken;
    const module = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRoot({
          parse: testParseConnection(),
          models: [ConsoleLedger, ConsoleVault],
          schemaCacheTtlMs: 0,
          rateLimiter: new KeyedSlidingWindowRateLimiter(100_000, 60),
          agentFactory: (req) => {
            if (req.headers['x-operator'] === 'yes') return {};
            const sessionToken = tokenOf(req);
            if (!sessionToken) throw new AgentUnauthorizedError('Unauthorized');
            return { sessionToken };
          },
        }),
        ParseAgentConsoleModule.forRoot({
          guards: [TestGuard],
          isOperator: (req) => (req as IncomingMessage).headers['x-operator'] === 'yes',
          callerOf: (req) =>
            (req as IncomingMessage).headers['x-operator'] === 'yes'
              ? { kind: 'operator', label: 'ops' }
              : { kind: 'user', label: 'console-policy-user' },
        }),
      ],
      providers: [ArchiveTools],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.init();
  }, 60_000);

  afterAll(() => app?.close());

  const policyAs = async (headers: Record<string, string>) =>
    (await request(app.getHttpServer()).get('/console/api/policy').set(headers).expect(200))
      .body as ConsolePolicy;

  it("tells a user what is withheld by reason, naming only what their agent's schema shows", async () => {
    const policy = await policyAs({ Authorization: `Bearer ${user}` });
    const ledger = policy.classes.find((c) => c.class_name === 'ConsoleLedger')!;
    expect(ledger.accessible).toBe(true);
    expect(ledger.fields_given).toEqual(expect.arrayContaining(['label', 'amount']));
    expect(ledger.fields_given).not.toContain('secretNote');
    expect(ledger.fields_withheld).toEqual([{ name: 'secretNote', reason: 'protected' }]);
    // internalCode is outside the allowlist: counted, never named to the user.
    expect(ledger.not_allowlisted_count).toBe(1);
    expect(JSON.stringify(policy)).not.toContain('internalCode');
    // The hidden class is not even named, nor the app's admin tool the user cannot call.
    expect(JSON.stringify(policy)).not.toContain('ConsoleVault');
    expect(JSON.stringify(policy)).not.toContain('purge_archive');
    expect(policy.unnamed_refused_tools).toBe(1);
    // Built-in tools are public vocabulary: refused ones are listed with the gate.
    expect(policy.tools.find((t) => t.name === 'delete_class')).toMatchObject({
      allowed: false,
      reason: 'permission_denied',
    });
  });

  it('shows the operator every class and tool, with names and reasons', async () => {
    const policy = await policyAs({ 'X-Operator': 'yes' });
    const ledger = policy.classes.find((c) => c.class_name === 'ConsoleLedger')!;
    // The master key sees protected fields; the allowlist still applies, by name.
    expect(ledger.fields_given).toContain('secretNote');
    expect(ledger.fields_withheld).toEqual([{ name: 'internalCode', reason: 'not_allowlisted' }]);
    const vault = policy.classes.find((c) => c.class_name === 'ConsoleVault')!;
    expect(vault.accessible).toBe(false);
    expect(vault.reason).toBeTruthy();
    expect(policy.tools.find((t) => t.name === 'purge_archive')).toMatchObject({
      allowed: false,
      reason: 'permission_denied',
    });
    expect(policy.unnamed_refused_tools).toBe(0);
  });

  it('identity: hidden classes for the operator only; the feed refuses the user', async () => {
    const server = app.getHttpServer();
    const asUser = await request(server)
      .get('/console/api/identity')
      .set('Authorization', `Bearer ${user}`)
      .expect(200);
    expect(asUser.body).toMatchObject({
      operator: false,
      caller: { label: 'console-policy-user' },
    });
    expect(asUser.body.agent.hidden_classes).toBeUndefined();
    expect(asUser.headers['cache-control']).toBe('no-store');
    const asOperator = await request(server)
      .get('/console/api/identity')
      .set('X-Operator', 'yes')
      .expect(200);
    expect(asOperator.body.agent.hidden_classes).toContain('ConsoleVault');
    await request(server)
      .get('/console/api/activity')
      .set('Authorization', `Bearer ${user}`)
      .expect(403);
    await request(server).get('/console/api/policy').expect(403);
  });
});
