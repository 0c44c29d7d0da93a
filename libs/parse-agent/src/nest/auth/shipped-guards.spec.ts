import {
  Injectable,
  Module,
  ServiceUnavailableException,
  UnauthorizedException,
  type ExecutionContext,
} from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { bindAgentToPrincipal } from '../../auth/bind-agent-to-principal';
import { principalOf } from '../../auth/parse-agent-principal';
import {
  ParseSessionVerifier,
  SessionCheckUnavailableError,
  type VerifiedSession,
} from '../../auth/session-verifier';
import { ParseAgentModule } from '../parse-agent.module';
import { McpApiKeyGuard } from './mcp-api-key.guard';
import { ParseAgentAuthGuard } from './parse-agent-auth.guard';
import { ParseSessionGuard, type GuardedRequest } from './parse-session.guard';

const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

/** Stands in for @nestjs/config's ConfigService: settings reach the module through injection. */
@Injectable()
class Settings {
  readonly values: Record<string, string> = {
    MCP_API_KEY: 'operator-key-from-config',
    SESSION_CACHE_MS: '1234',
    SESSION_TIMEOUT_MS: '567',
  };
  get(key: string): string {
    return this.values[key];
  }
}

@Module({ providers: [Settings], exports: [Settings] })
class SettingsModule {}

const contextOf = (request: Partial<GuardedRequest>) =>
  ({ switchToHttp: () => ({ getRequest: () => request }) }) as unknown as ExecutionContext;

const req = (headers: Record<string, string>, extra: Partial<GuardedRequest> = {}) =>
  ({ headers, method: 'POST', body: { method: 'tools/list' }, ...extra }) as GuardedRequest;

/** A scripted session check: the guards' rules without a Parse Server. */
class ScriptedVerifier {
  answer: VerifiedSession | null | 'down' = {
    userId: 'u1',
    username: 'alice',
    tenant: { tenantId: 'acme' },
  };
  calls: Array<{ token: string; fresh?: boolean }> = [];
  verify(token: string, options: { fresh?: boolean } = {}) {
    this.calls.push({ token, fresh: options.fresh });
    if (this.answer === 'down')
      return Promise.reject(new SessionCheckUnavailableError('Parse Server is unreachable.'));
    return Promise.resolve(this.answer);
  }
}

/** A subclass adjusting one rule: members are protected so this is possible. */
@Injectable()
class AlwaysFreshSessionGuard extends ParseSessionGuard {
  protected override needsFreshCheck(): boolean {
    return true;
  }
}

async function compile(
  verifier?: ScriptedVerifier,
  auth: Record<string, unknown> | ((s: Settings) => Record<string, unknown>) = (s) => ({
    apiKey: s.get('MCP_API_KEY'),
    session: {
      cacheTtlMs: Number(s.get('SESSION_CACHE_MS')),
      timeoutMs: Number(s.get('SESSION_TIMEOUT_MS')),
    },
    tenant: { fromRole: '{tenant}-staff' },
  }),
  guards: Array<new (...args: never[]) => unknown> = [
    ParseSessionGuard,
    McpApiKeyGuard,
    ParseAgentAuthGuard,
    AlwaysFreshSessionGuard,
  ],
): Promise<TestingModule> {
  let builder = Test.createTestingModule({
    imports: [
      ParseAgentModule.forRootAsync({
        imports: [SettingsModule],
        inject: [Settings],
        useFactory: (settings: Settings) => ({
          parse,
          auth: typeof auth === 'function' ? auth(settings) : auth,
          agentFactory: bindAgentToPrincipal(),
        }),
        mcp: { guards: [ParseAgentAuthGuard] },
      }),
    ],
    providers: guards,
  });
  if (verifier) builder = builder.overrideProvider(ParseSessionVerifier).useValue(verifier);
  return builder.compile();
}

describe('shipped guards (Nest module, settings from forRootAsync)', () => {
  it('builds the session check from the auth settings the async factory read from config', async () => {
    const moduleRef = await compile();
    const verifier = moduleRef.get(ParseSessionVerifier) as unknown as Record<string, unknown>;
    expect(verifier).toBeInstanceOf(ParseSessionVerifier);
    expect(verifier.cacheTtlMs).toBe(1234);
    expect(verifier.timeoutMs).toBe(567);
    expect(verifier.tenantSource).toEqual({ fromRole: '{tenant}-staff' });
    await moduleRef.close();
  });

  describe('McpApiKeyGuard', () => {
    it('accepts the configured key and puts the operator on the request', async () => {
      const moduleRef = await compile();
      const guard = moduleRef.get(McpApiKeyGuard);
      const request = req({ 'x-mcp-api-key': 'operator-key-from-config' });
      expect(guard.canActivate(contextOf(request))).toBe(true);
      expect(principalOf(request)).toEqual({ kind: 'operator' });
      await moduleRef.close();
    });

    it('refuses a wrong, a missing or a bearer-only request with 401 and sets no principal', async () => {
      const moduleRef = await compile();
      const guard = moduleRef.get(McpApiKeyGuard);
      const cases: Array<Record<string, string>> = [
        { 'x-mcp-api-key': 'operator-key-from-confiG' },
        { 'x-mcp-api-key': 'operator-key' },
        {},
        { authorization: 'Bearer r:alice' },
      ];
      for (const headers of cases) {
        const request = req(headers);
        expect(() => guard.canActivate(contextOf(request))).toThrow(UnauthorizedException);
        expect(principalOf(request)).toBeUndefined();
      }
      await moduleRef.close();
    });

    it('fails the boot, naming the setting, when no operator key is configured', async () => {
      await expect(compile(undefined, {})).rejects.toThrow(/set auth\.apiKey/);
    });
  });

  describe('ParseSessionGuard', () => {
    it('puts the verified user, their token and tenant on the request', async () => {
      const verifier = new ScriptedVerifier();
      const moduleRef = await compile(verifier);
      const request = req({ authorization: 'Bearer r:alice' });
      await expect(moduleRef.get(ParseSessionGuard).canActivate(contextOf(request))).resolves.toBe(
        true,
      );
      expect(principalOf(request)).toEqual({
        kind: 'user',
        userId: 'u1',
        username: 'alice',
        sessionToken: 'r:alice',
        tenantId: 'acme',
      });
      expect(verifier.calls).toEqual([{ token: 'r:alice', fresh: false }]);
      await moduleRef.close();
    });

    it('checks afresh for requests that may open an MCP session', async () => {
      const verifier = new ScriptedVerifier();
      const moduleRef = await compile(verifier);
      const guard = moduleRef.get(ParseSessionGuard);
      const bearer = { authorization: 'Bearer r:alice' };
      await guard.canActivate(contextOf(req(bearer, { body: { method: 'initialize' } })));
      await guard.canActivate(contextOf(req(bearer, { body: undefined })));
      await guard.canActivate(contextOf(req(bearer, { method: 'GET', body: undefined })));
      expect(verifier.calls.map((c) => c.fresh)).toEqual([true, true, false]);
      await moduleRef.close();
    });

    it('answers a rejected or missing token with 401 and Parse down with 503', async () => {
      const verifier = new ScriptedVerifier();
      const moduleRef = await compile(verifier);
      const guard = moduleRef.get(ParseSessionGuard);
      verifier.answer = null;
      await expect(
        guard.canActivate(contextOf(req({ authorization: 'Bearer r:gone' }))),
      ).rejects.toBeInstanceOf(UnauthorizedException);
      await expect(
        guard.canActivate(contextOf(req({ 'x-mcp-api-key': 'operator-key-from-config' }))),
      ).rejects.toBeInstanceOf(UnauthorizedException);
      verifier.answer = 'down';
      await expect(
        guard.canActivate(contextOf(req({ authorization: 'Bearer r:alice' }))),
      ).rejects.toBeInstanceOf(ServiceUnavailableException);
      await moduleRef.close();
    });

    it('keeps a user without a tenant on the request with the reason, for the binding to refuse', async () => {
      const verifier = new ScriptedVerifier();
      verifier.answer = { userId: 'u2', username: 'dana', tenant: { reason: 'no tenant role' } };
      const moduleRef = await compile(verifier);
      const request = req({ authorization: 'Bearer r:dana' });
      await moduleRef.get(ParseSessionGuard).canActivate(contextOf(request));
      expect(principalOf(request)).toMatchObject({
        kind: 'user',
        noTenantReason: 'no tenant role',
      });
      expect(principalOf(request)).not.toHaveProperty('tenantId');
      expect(() => bindAgentToPrincipal()(request)).toThrow(/No tenant for user dana/);
      await moduleRef.close();
    });

    it('can be subclassed: a protected rule overridden takes effect', async () => {
      const verifier = new ScriptedVerifier();
      const moduleRef = await compile(verifier);
      await moduleRef
        .get(AlwaysFreshSessionGuard)
        .canActivate(contextOf(req({ authorization: 'Bearer r:alice' })));
      expect(verifier.calls).toEqual([{ token: 'r:alice', fresh: true }]);
      await moduleRef.close();
    });
  });

  describe('ParseAgentAuthGuard', () => {
    it('takes a bearer session, else the operator key, else refuses', async () => {
      const verifier = new ScriptedVerifier();
      const moduleRef = await compile(verifier);
      const guard = moduleRef.get(ParseAgentAuthGuard);
      const user = req({ authorization: 'Bearer r:alice' });
      await guard.canActivate(contextOf(user));
      expect(principalOf(user)).toMatchObject({ kind: 'user', userId: 'u1' });
      const operator = req({ 'x-mcp-api-key': 'operator-key-from-config' });
      await guard.canActivate(contextOf(operator));
      expect(principalOf(operator)).toEqual({ kind: 'operator' });
      await expect(
        guard.canActivate(contextOf(req({ 'x-mcp-api-key': 'wrong' }))),
      ).rejects.toBeInstanceOf(UnauthorizedException);
      await expect(guard.canActivate(contextOf(req({})))).rejects.toBeInstanceOf(
        UnauthorizedException,
      );
      // A rejected bearer token is not rescued by a right key next to it.
      verifier.answer = null;
      await expect(
        guard.canActivate(
          contextOf(
            req({ authorization: 'Bearer r:gone', 'x-mcp-api-key': 'operator-key-from-config' }),
          ),
        ),
      ).rejects.toBeInstanceOf(UnauthorizedException);
      await moduleRef.close();
    });

    it('accepts no operator at all when no key is configured', async () => {
      const moduleRef = await compile(
        new ScriptedVerifier(),
        { tenant: { fromRole: '{tenant}' } },
        [ParseAgentAuthGuard],
      );
      await expect(
        moduleRef
          .get(ParseAgentAuthGuard)
          .canActivate(contextOf(req({ 'x-mcp-api-key': 'anything' }))),
      ).rejects.toBeInstanceOf(UnauthorizedException);
      await moduleRef.close();
    });
  });

  it('fails the boot on a malformed auth section, naming the setting', async () => {
    await expect(
      compile(undefined, { apiKey: 'k', tenant: { fromRole: 'staff' } }),
    ).rejects.toThrow(/auth\.tenant fromRole must be a role name pattern with one \{tenant\}/);
    await expect(compile(undefined, { apiKey: 'k', session: { timeoutMs: 0 } })).rejects.toThrow(
      /auth\.session\.timeoutMs must be a positive number/,
    );
    await expect(compile(undefined, { apiKey: 'k', apikey: 'k' })).rejects.toThrow(
      /auth\.apikey is not a setting/,
    );
  });
});
