import { stringifyJsonRpc, withPreserializedJson, withPreserializedText } from './preserialized';

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

  it('keeps a shared result text for every request', () => {
    const result = withPreserializedJson({ tools: [] });
    const first = stringifyJsonRpc({ jsonrpc: '2.0', id: 1, result });
    expect(stringifyJsonRpc({ jsonrpc: '2.0', id: 1, result })).toBe(first);
  });

  it("sends a call result's own text once, then lets go of it and serializes the object", () => {
    const value = { content: [{ type: 'text', text: 'rows' }], isError: false };
    // Spaced differently from JSON.stringify, so the test sees which text was used.
    const result = withPreserializedText(
      value,
      '{ "content": [{"type":"text","text":"rows"}], "isError": false }',
    );
    const message = { jsonrpc: '2.0', id: 3, result };
    expect(stringifyJsonRpc(message)).toBe(
      '{"jsonrpc":"2.0","id":3,"result":{ "content": [{"type":"text","text":"rows"}], "isError": false }}',
    );
    // Sent again (a resumed stream replaying a stored message): the same JSON, built from the object.
    expect(stringifyJsonRpc(message)).toBe(JSON.stringify(message));
    expect(JSON.parse(stringifyJsonRpc(message))).toEqual(JSON.parse(JSON.stringify(message)));
    expect(Object.isFrozen(result)).toBe(true);
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
