import { connectHeaders, connectUrl } from './cli-connect';

describe('connectUrl', () => {
  it('accepts https anywhere and http on this machine', () => {
    expect(connectUrl('https://app.example.com/mcp', false).href).toBe(
      'https://app.example.com/mcp',
    );
    expect(connectUrl('http://127.0.0.1:3000/mcp', false).port).toBe('3000');
    expect(connectUrl('http://localhost:3000/mcp', false).hostname).toBe('localhost');
    expect(connectUrl('http://[::1]:3000/mcp', false).port).toBe('3000');
  });

  it('refuses plain http to another host unless allowed, other schemes and credentials in the URL', () => {
    expect(() => connectUrl('http://app.example.com/mcp', false)).toThrow(
      /Refusing plain http to app\.example\.com: .* --allow-insecure-http/,
    );
    expect(connectUrl('http://app.example.com/mcp', true).hostname).toBe('app.example.com');
    expect(() => connectUrl('ftp://app.example.com/mcp', false)).toThrow(/https:\/\/ or http:\/\//);
    expect(() => connectUrl('app.example.com/mcp', false)).toThrow(/full URL/);
    expect(() => connectUrl('https://u:secret@app.example.com/mcp', false)).toThrow(
      /no credentials in the URL/,
    );
  });
});

describe('connectHeaders', () => {
  const warnings: string[] = [];
  const warn = (line: string) => warnings.push(line);
  beforeEach(() => (warnings.length = 0));
  const request = (
    env: Record<string, string>,
    extra: Partial<Parameters<typeof connectHeaders>[0]> = {},
  ) => ({
    options: {},
    globals: {},
    env,
    ...extra,
  });

  it('sends a session token as a Bearer token and nothing from Parse', () => {
    const { headers, actingAs } = connectHeaders(request({ PARSE_SESSION_TOKEN: 'r:abc' }), warn);
    expect(headers).toEqual({ Authorization: 'Bearer r:abc' });
    expect(actingAs).toMatch(/user/);
    expect(warnings).toEqual([]);
  });

  it('prefers the token given by flag (file or stdin) over the environment', () => {
    const { headers } = connectHeaders(
      request({ PARSE_SESSION_TOKEN: 'r:env' }, { sessionToken: 'r:file' }),
      warn,
    );
    expect(headers.Authorization).toBe('Bearer r:file');
  });

  it('sends the operator key as X-MCP-API-Key', () => {
    expect(connectHeaders(request({ MCP_API_KEY: 'k' }), warn).headers).toEqual({
      'X-MCP-API-Key': 'k',
    });
  });

  it('adds --header values and warns when one carries a credential, never printing it', () => {
    const { headers } = connectHeaders(
      request(
        {},
        { options: { header: ['X-Requested-By: desktop', 'Authorization: Bearer r:argv'] } },
      ),
      warn,
    );
    expect(headers).toEqual({ 'X-Requested-By': 'desktop', Authorization: 'Bearer r:argv' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/--header Authorization puts a credential on the command line/);
    expect(warnings[0]).not.toContain('r:argv');
  });

  it('refuses no credential, two credentials, a login and a malformed header', () => {
    expect(() => connectHeaders(request({}), warn)).toThrow(/needs a credential/);
    expect(() =>
      connectHeaders(request({ PARSE_SESSION_TOKEN: 'r:a', MCP_API_KEY: 'k' }), warn),
    ).toThrow(/one identity: a session token and MCP_API_KEY/);
    expect(() =>
      connectHeaders(
        request({ MCP_API_KEY: 'k' }, { options: { header: ['Authorization: x'] } }),
        warn,
      ),
    ).toThrow(/one identity/);
    expect(() => connectHeaders(request({}, { globals: { username: 'alice' } }), warn)).toThrow(
      /does not log in/,
    );
    expect(() =>
      connectHeaders(request({ MCP_API_KEY: 'k' }, { options: { header: ['no colon'] } }), warn),
    ).toThrow(/"Name: value"/);
  });
});
