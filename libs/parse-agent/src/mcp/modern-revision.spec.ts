import {
  classifyEra,
  discoverResult,
  encodeModernResult,
  honoredListenFilter,
  withoutEnvelope,
} from './modern-revision';
import { MODERN_META_KEY } from './protocol.constants';

const envelope = {
  [MODERN_META_KEY.protocolVersion]: '2026-07-28',
  [MODERN_META_KEY.clientCapabilities]: {},
  [MODERN_META_KEY.clientInfo]: { name: 'c', version: '1' },
};
const call = (meta: Record<string, unknown> = envelope) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'query_class', arguments: {}, _meta: { ...meta, progressToken: 'p' } },
});
const headers = { protocolVersion: '2026-07-28', method: 'tools/call', name: 'query_class' };

describe('2026-07-28 request classification', () => {
  it('leaves legacy bodies alone', () => {
    expect(classifyEra({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {})).toEqual({
      era: 'legacy',
    });
    expect(classifyEra(call({}), { protocolVersion: '2025-06-18' })).toEqual({ era: 'legacy' });
  });

  it('reads the envelope of a request whose headers agree', () => {
    expect(classifyEra(call(), headers)).toEqual({
      era: 'modern',
      envelope: {
        protocolVersion: '2026-07-28',
        clientCapabilities: {},
        clientInfo: { name: 'c', version: '1' },
      },
    });
  });

  it.each([
    ['a missing Mcp-Method', { ...headers, method: undefined }, -32600],
    ['a different MCP-Protocol-Version', { ...headers, protocolVersion: '2025-06-18' }, -32020],
    ['a different Mcp-Method', { ...headers, method: 'tools/list' }, -32020],
    ['a different Mcp-Name', { ...headers, name: 'delete_object' }, -32020],
  ])('refuses %s with 400', (_label, given, code) => {
    const verdict = classifyEra(call(), given);
    expect(verdict).toMatchObject({
      era: 'refused',
      status: 400,
      message: { id: 7, error: { code } },
    });
  });

  it('refuses a modern header without an envelope, and a missing capabilities key', () => {
    expect(classifyEra(call({}), headers)).toMatchObject({ era: 'refused', status: 400 });
    const noCaps = { [MODERN_META_KEY.protocolVersion]: '2026-07-28' };
    expect(classifyEra(call(noCaps), headers)).toMatchObject({
      era: 'refused',
      message: { error: { code: -32602 } },
    });
  });

  it('answers an unknown enveloped revision with the supported list', () => {
    const verdict = classifyEra(
      call({ ...envelope, [MODERN_META_KEY.protocolVersion]: '2099-01-01' }),
      {
        ...headers,
        protocolVersion: '2099-01-01',
      },
    );
    expect(verdict).toMatchObject({
      era: 'refused',
      message: {
        error: {
          code: -32022,
          data: { requested: '2099-01-01', supported: expect.arrayContaining(['2026-07-28']) },
        },
      },
    });
  });

  it('strips only the envelope keys before dispatch', () => {
    const stripped = withoutEnvelope(call()) as { params: { _meta: unknown } };
    expect(stripped.params._meta).toEqual({ progressToken: 'p' });
  });
});

describe('2026-07-28 results', () => {
  const serverInfo = { name: 'nestjs-parse-agent', version: '1' };

  it('stamps resultType, private no-cache hints on lists, and the server identity', () => {
    expect(encodeModernResult('tools/list', { tools: [] }, serverInfo)).toEqual({
      tools: [],
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { [MODERN_META_KEY.serverInfo]: serverInfo },
    });
    const called = encodeModernResult('tools/call', { content: [], _meta: { a: 1 } }, serverInfo);
    expect(called).not.toHaveProperty('ttlMs');
    expect(called._meta).toEqual({ a: 1, [MODERN_META_KEY.serverInfo]: serverInfo });
  });

  it('builds server/discover from the initialize answer', () => {
    const result = discoverResult({
      protocolVersion: '2025-06-18',
      capabilities: { tools: { listChanged: true } },
      serverInfo,
      instructions: 'Use query_class.',
    });
    expect(result).toMatchObject({
      resultType: 'complete',
      supportedVersions: expect.arrayContaining(['2026-07-28', '2025-03-26']),
      capabilities: { tools: { listChanged: true } },
      instructions: 'Use query_class.',
      _meta: { [MODERN_META_KEY.serverInfo]: serverInfo },
    });
    expect(result).not.toHaveProperty('protocolVersion');
  });

  it('honours tool and prompt list changes only', () => {
    expect(
      honoredListenFilter({
        toolsListChanged: true,
        promptsListChanged: false,
        resourcesListChanged: true,
        resourceSubscriptions: ['parse://x'],
      }),
    ).toEqual({ toolsListChanged: true });
    expect(honoredListenFilter('all')).toBeUndefined();
  });
});
