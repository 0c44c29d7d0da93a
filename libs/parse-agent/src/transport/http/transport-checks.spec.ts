import {
  acceptsEventStream,
  hasRequiredHeader,
  hostHeaderName,
  isHostAllowedOnLoopback,
  isLoopbackAddress,
  isLoopbackOrigin,
  isOriginAllowed,
  mediaType,
  normalizeAllowedOrigins,
  normalizeRequiredHeader,
  underscoreHeaderNames,
} from './transport-checks';

describe('transport checks', () => {
  it('reads the media type without parameters, case-insensitively', () => {
    expect(mediaType('Application/JSON; charset=utf-8')).toBe('application/json');
    expect(mediaType(undefined)).toBe('');
    expect(mediaType(' text/plain ')).toBe('text/plain');
  });

  it('matches exact origins and dot-domain entries', () => {
    const allowed = normalizeAllowedOrigins([' HTTPS://App.Example.com ', '.trusted.test', ''])!;
    expect(allowed).toEqual(['https://app.example.com', '.trusted.test']);
    expect(isOriginAllowed('https://app.example.com', allowed)).toBe(true);
    expect(isOriginAllowed('http://app.example.com', allowed)).toBe(false);
    expect(isOriginAllowed('https://trusted.test', allowed)).toBe(true);
    expect(isOriginAllowed('http://deep.sub.trusted.test', allowed)).toBe(true);
    expect(isOriginAllowed('https://eviltrusted.test', allowed)).toBe(false);
    expect(isOriginAllowed('https://trusted.test.evil.com', allowed)).toBe(false);
    expect(isOriginAllowed('https://trusted.test:8443', allowed)).toBe(false);
    expect(normalizeAllowedOrigins([])).toBeUndefined();
    expect(normalizeAllowedOrigins(undefined)).toBeUndefined();
  });

  it('normalises the required custom header and checks it', () => {
    expect(normalizeRequiredHeader('X-MCP-Client')).toEqual({ name: 'x-mcp-client' });
    expect(normalizeRequiredHeader({ 'X-MCP-Client': 'v1' })).toEqual({
      name: 'x-mcp-client',
      value: 'v1',
    });
    expect(normalizeRequiredHeader('  ')).toBeUndefined();
    expect(() => normalizeRequiredHeader(42 as never)).toThrow(/header name/);
    expect(() => normalizeRequiredHeader({ a: 'x', b: 'y' })).toThrow(/exactly one/);
    expect(hasRequiredHeader('anything', { name: 'x' })).toBe(true);
    expect(hasRequiredHeader('', { name: 'x' })).toBe(false);
    expect(hasRequiredHeader(undefined, { name: 'x' })).toBe(false);
    expect(hasRequiredHeader('v1', { name: 'x', value: 'v1' })).toBe(true);
    expect(hasRequiredHeader('V1', { name: 'x', value: 'v1' })).toBe(false);
  });

  it('recognises loopback addresses and Host names', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(a)).toBe(true);
    for (const a of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', undefined])
      expect(isLoopbackAddress(a)).toBe(false);
    expect(hostHeaderName('LocalHost:3000')).toBe('localhost');
    expect(hostHeaderName('[::1]:8080')).toBe('::1');
    expect(hostHeaderName('127.0.0.1')).toBe('127.0.0.1');
    for (const h of [
      'localhost',
      'localhost:1',
      '127.0.0.1:3001',
      '[::1]',
      '[::1]:3001',
      undefined,
    ])
      expect(isHostAllowedOnLoopback(h)).toBe(true);
    for (const h of ['evil.example', 'evil.example:3001', '192.168.0.2', 'localhost.evil.example'])
      expect(isHostAllowedOnLoopback(h)).toBe(false);
    expect(isHostAllowedOnLoopback('dev.tunnel:443', ['dev.tunnel'])).toBe(true);
  });

  it('finds underscore header names in raw headers', () => {
    expect(
      underscoreHeaderNames(['Host', 'x', 'X_MCP_API_Key', 'k', 'X-MCP-API-Key', 'k2']),
    ).toEqual(['x_mcp_api_key']);
  });

  it('detects an event-stream Accept anywhere in the header', () => {
    expect(acceptsEventStream('application/json, text/event-stream')).toBe(true);
    expect(acceptsEventStream('Text/Event-Stream')).toBe(true);
    expect(acceptsEventStream('application/json')).toBe(false);
    expect(acceptsEventStream(undefined)).toBe(false);
  });
});

describe('isLoopbackOrigin', () => {
  const ports = ['', ':80', ':3001', ':5173', ':65535'];
  const schemes = ['http', 'https'];

  it('accepts a page on this machine, any port, either scheme', () => {
    const hosts = ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '[::1]'];
    for (const scheme of schemes)
      for (const host of hosts)
        for (const port of ports) expect(isLoopbackOrigin(`${scheme}://${host}${port}`)).toBe(true);
  });

  it('refuses every other origin, look-alikes included', () => {
    const hosts = [
      'evil.example',
      'localhost.evil.example',
      '127.0.0.1.evil.example',
      'localhost-evil.example',
      'evil-localhost',
      '128.0.0.1',
      '10.0.0.1',
      '[::2]',
      '[fe80::1]',
      '0.0.0.0',
    ];
    for (const scheme of schemes)
      for (const host of hosts)
        for (const port of ports)
          expect(isLoopbackOrigin(`${scheme}://${host}${port}`)).toBe(false);
    for (const origin of [
      'null',
      '',
      'file://',
      'ftp://localhost',
      'chrome-extension://abcdef',
      'http://localhost@evil.example',
      'http://evil.example@localhost',
      'http://localhost/path',
      'localhost:3000',
    ])
      expect(isLoopbackOrigin(origin)).toBe(false);
  });
});
