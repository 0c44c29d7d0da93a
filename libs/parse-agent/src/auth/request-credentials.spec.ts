import { apiKeyOf, bearerTokenOf, mayOpenMcpSession } from './request-credentials';

describe('request credentials', () => {
  it('reads a bearer token, case-insensitive scheme, and nothing else', () => {
    expect(bearerTokenOf({ authorization: 'Bearer r:abc' })).toBe('r:abc');
    expect(bearerTokenOf({ authorization: 'bearer r:abc' })).toBe('r:abc');
    expect(bearerTokenOf({ authorization: 'Basic dXNlcjpwdw==' })).toBeUndefined();
    expect(bearerTokenOf({ authorization: 'Bearer ' })).toBeUndefined();
    expect(bearerTokenOf({ authorization: 'Bearer a b' })).toBeUndefined();
    expect(bearerTokenOf({})).toBeUndefined();
    expect(bearerTokenOf(undefined)).toBeUndefined();
  });

  it('reads the operator key from X-MCP-API-Key; empty or repeated headers count as none', () => {
    expect(apiKeyOf({ 'x-mcp-api-key': 'k' })).toBe('k');
    expect(apiKeyOf({ 'x-mcp-api-key': '' })).toBeUndefined();
    expect(apiKeyOf({ 'x-mcp-api-key': ['k', 'k'] })).toBeUndefined();
    expect(apiKeyOf({})).toBeUndefined();
  });

  it('treats initialize, a batch holding one, and an unread POST body as opening a session', () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} };
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect(mayOpenMcpSession('POST', init)).toBe(true);
    expect(mayOpenMcpSession('POST', [list, init])).toBe(true);
    expect(mayOpenMcpSession('POST', undefined)).toBe(true);
    expect(mayOpenMcpSession('POST', list)).toBe(false);
    expect(mayOpenMcpSession('POST', { message: 'hi' })).toBe(false);
    expect(mayOpenMcpSession('GET', undefined)).toBe(false);
    expect(mayOpenMcpSession('DELETE', undefined)).toBe(false);
  });
});
