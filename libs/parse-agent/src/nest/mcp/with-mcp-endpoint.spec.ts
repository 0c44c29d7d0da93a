import { Injectable, type CanActivate } from '@nestjs/common';
import { GUARDS_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { Test } from '@nestjs/testing';
import { ParseAgentModule } from '../parse-agent.module';
import { McpHttpHandler } from '../../transport/http/mcp-http.handler';
import { resolveMcpEndpointOptions } from '../../transport/http/mcp-endpoint-options';

@Injectable()
class AllowAll implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

const parse = { serverURL: 'http://127.0.0.1:1/parse', appId: 'app', masterKey: 'mk' };

describe('the mcp extra of ParseAgentModule.forRoot', () => {
  it('mounts nothing without it', () => {
    const module = ParseAgentModule.forRoot({ parse });
    expect(module.controllers ?? []).toHaveLength(0);
  });

  it('adds a controller at the configured path behind the configured guards', () => {
    const module = ParseAgentModule.forRoot({
      parse,
      agentFactory: () => ({}),
      mcp: { path: '/agent/mcp/', guards: [AllowAll] },
    });
    expect(module.controllers).toHaveLength(1);
    const controller = module.controllers![0];
    expect(Reflect.getMetadata(PATH_METADATA, controller)).toBe('/agent/mcp');
    expect(Reflect.getMetadata(GUARDS_METADATA, controller)).toEqual([AllowAll]);
    expect(module.global).toBe(true);
  });

  it('works with forRootAsync (the extra stays synchronous)', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParseAgentModule.forRootAsync({
          useFactory: () => ({ parse, agentFactory: () => ({}) }),
          mcp: { streaming: false },
        }),
      ],
    }).compile();
    expect(moduleRef.get(McpHttpHandler)).toBeInstanceOf(McpHttpHandler);
    await moduleRef.close();
  });

  it('fails the boot with a fix-it message when agentFactory is missing', async () => {
    await expect(
      Test.createTestingModule({
        imports: [ParseAgentModule.forRoot({ parse, mcp: {} })],
      }).compile(),
    ).rejects.toThrow(/agentFactory\(request\)/);
  });
});

describe('resolveMcpEndpointOptions', () => {
  it('applies the defaults', () => {
    expect(resolveMcpEndpointOptions({})).toEqual(
      expect.objectContaining({
        path: '/mcp',
        guards: [],
        streaming: true,
        heartbeatIntervalMs: 2000,
        maxBodyBytes: 1_048_576,
        preAuthMaxBodyBytes: 65_536,
        maxGetStreamsPerPrincipal: 8,
        maxJsonDepth: 20,
        sessions: true,
        allowedHosts: [],
        maxSessions: 10_000,
        maxSessionsPerPrincipal: 32,
        initializeRateLimit: { limit: 30, windowSeconds: 60 },
      }),
    );
    expect(resolveMcpEndpointOptions({ initializeRateLimit: false }).initializeRateLimit).toBe(
      false,
    );
  });

  it('names the setting to fix', () => {
    expect(() => resolveMcpEndpointOptions({ path: 'mcp' })).toThrow(/extras\.mcp: path/);
    expect(() => resolveMcpEndpointOptions({ heartbeatIntervalMs: 0 })).toThrow(
      /heartbeatIntervalMs must be a positive number/,
    );
    expect(() => resolveMcpEndpointOptions({ guards: [null as never] })).toThrow(/guards/);
    expect(() => resolveMcpEndpointOptions({ preAuthRateLimiter: {} as never })).toThrow(
      /preAuthRateLimiter must have a check/,
    );
    expect(() => resolveMcpEndpointOptions({ requireCustomHeader: 5 as never })).toThrow(
      /requireCustomHeader/,
    );
    expect(() => resolveMcpEndpointOptions({ allowedOrigins: 'x' as never })).toThrow(
      /allowedOrigins/,
    );
    expect(() =>
      resolveMcpEndpointOptions({ maxBodyBytes: 4096, preAuthMaxBodyBytes: 8192 }),
    ).toThrow(/preAuthMaxBodyBytes \(8192\) must not exceed maxBodyBytes \(4096\)/);
    expect(() => resolveMcpEndpointOptions({ preAuthenticate: 'yes' as never })).toThrow(
      /preAuthenticate must be a function/,
    );
    expect(() => resolveMcpEndpointOptions({ maxGetStreamsPerPrincipal: 0 })).toThrow(
      /maxGetStreamsPerPrincipal must be a positive number/,
    );
    expect(() => resolveMcpEndpointOptions({ maxSessions: -1 })).toThrow(
      /maxSessions must be a positive number/,
    );
    expect(() =>
      resolveMcpEndpointOptions({ initializeRateLimit: { limit: 0, windowSeconds: 60 } }),
    ).toThrow(/initializeRateLimit must be false or \{ limit/);
    expect(() => resolveMcpEndpointOptions({ initializeRateLimit: true as never })).toThrow(
      /initializeRateLimit/,
    );
    expect(() => resolveMcpEndpointOptions({ userKey: 'id' as never })).toThrow(
      /userKey must be a function/,
    );
  });

  it('keeps the pre-auth body limit within a smaller maxBodyBytes', () => {
    expect(resolveMcpEndpointOptions({ maxBodyBytes: 2048 }).preAuthMaxBodyBytes).toBe(2048);
  });

  it('takes an Authorization, Cookie or X-MCP-API-Key header as credentials by default', () => {
    const { preAuthenticate } = resolveMcpEndpointOptions({});
    const req = (headers: Record<string, string>) => ({ headers }) as never;
    expect(preAuthenticate(req({ authorization: 'Bearer x' }))).toBe(true);
    expect(preAuthenticate(req({ cookie: 'sid=1' }))).toBe(true);
    expect(preAuthenticate(req({ 'x-mcp-api-key': 'k' }))).toBe(true);
    expect(preAuthenticate(req({ 'x-other': 'k' }))).toBe(false);
  });
});
