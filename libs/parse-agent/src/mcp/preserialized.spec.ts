import { stringifyJsonRpc, withPreserializedJson } from './preserialized';

describe('preserialized JSON-RPC results', () => {
  it('produces exactly what JSON.stringify would, reusing the cached result text', () => {
    const result = withPreserializedJson({
      tools: [{ name: 'a', inputSchema: { type: 'object' } }],
    });
    for (const id of [1, 'abc', null, undefined]) {
      const message = { jsonrpc: '2.0', id, result };
      expect(JSON.parse(stringifyJsonRpc(message))).toEqual({
        jsonrpc: '2.0',
        id: id ?? null,
        result,
      });
    }
    expect(Object.isFrozen(result)).toBe(true);
    expect(Object.keys(result)).toEqual(['tools']);
  });

  it('falls back to JSON.stringify for ordinary messages and errors', () => {
    const plain = { jsonrpc: '2.0', id: 7, result: { ok: true } };
    expect(stringifyJsonRpc(plain)).toBe(JSON.stringify(plain));
    const error = {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32601, message: 'Method not found: x' },
    };
    expect(stringifyJsonRpc(error)).toBe(JSON.stringify(error));
  });
});
