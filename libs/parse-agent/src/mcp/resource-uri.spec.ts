import { AgentValidationError } from '../core/errors';
import { parseResourceUri } from './resource-uri';

describe('parseResourceUri', () => {
  it('reads the class and kind, schema by default', () => {
    expect(parseResourceUri('parse://Order')).toEqual({
      uri: 'parse://Order',
      className: 'Order',
      kind: 'schema',
    });
    for (const kind of ['schema', 'count', 'samples'] as const) {
      expect(parseResourceUri(`parse://_User/${kind}`)).toMatchObject({ className: '_User', kind });
    }
  });

  it('reads a query resource: where as JSON, keys as a list, the URI kept as sent', () => {
    const where = { status: 'paid', total: { $gt: 10 } };
    const uri = `parse://Order/query?where=${encodeURIComponent(JSON.stringify(where))}&keys=status,total,status`;
    expect(parseResourceUri(uri)).toEqual({
      uri,
      className: 'Order',
      kind: 'query',
      where,
      keys: ['status', 'total'],
    });
    expect(parseResourceUri('parse://Order/query')).toEqual({
      uri: 'parse://Order/query',
      className: 'Order',
      kind: 'query',
    });
  });

  it.each([
    ['parse://Order/count?where=%7B%7D', /Only parse:\/\/<Class>\/query takes parameters/],
    ['parse://Order/query?limit=5', /unknown parameter 'limit'.*where and keys/],
    ['parse://Order/query?where=%5B1%5D', /where must be a JSON object/],
    ['parse://Order/query?where=%7Bnope', /where must be a JSON object/],
    ['parse://Order/query?keys=a,,b', /comma-separated list/],
    ['parse://Order/query?keys=a&keys=b', /given more than once/],
    ['parse://Order/rows', /^Invalid resource URI: parse:\/\/Order\/rows$/],
    ['parse://9Order/count', /^Invalid resource URI/],
    ['parse://Order/count\n', /^Invalid resource URI/],
    [`parse://Order/query?where=${'x'.repeat(9000)}`, /longer than 8192/],
  ])('refuses %p with a message naming what is accepted', (uri, message) => {
    expect(() => parseResourceUri(uri)).toThrow(AgentValidationError);
    expect(() => parseResourceUri(uri)).toThrow(message);
  });

  it('refuses anything that is not a string as an empty URI', () => {
    for (const value of [undefined, null, 5, {}, ['parse://Order']]) {
      expect(() => parseResourceUri(value)).toThrow(/^Invalid resource URI: $/);
    }
  });
});
