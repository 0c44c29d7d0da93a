import { RelayedSubscriptions } from './relayed-subscriptions';

const subscribe = (id: number, uri: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'resources/subscribe',
  params: { uri },
});

describe('RelayedSubscriptions', () => {
  it('keeps what the server confirmed, in order, and drops what the client unsubscribed', () => {
    const held = new RelayedSubscriptions();
    held.note(subscribe(1, 'parse://Order/count'), [{ jsonrpc: '2.0', id: 1, result: {} }]);
    held.note(subscribe(2, 'parse://Order/samples'), [{ jsonrpc: '2.0', id: 2, result: {} }]);
    // Confirmed twice is still one.
    held.note(subscribe(3, 'parse://Order/count'), [{ jsonrpc: '2.0', id: 3, result: {} }]);
    expect(held.list()).toEqual(['parse://Order/count', 'parse://Order/samples']);
    held.note(
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'resources/unsubscribe',
        params: { uri: 'parse://Order/count' },
      },
      [{ jsonrpc: '2.0', id: 4, result: {} }],
    );
    expect(held.list()).toEqual(['parse://Order/samples']);
    held.forget('parse://Order/samples');
    expect(held.list()).toEqual([]);
  });

  it('never keeps a refused, unanswered or foreign subscription', () => {
    const held = new RelayedSubscriptions();
    held.note(subscribe(1, 'parse://ApiCredential/count'), [
      { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'hidden' } },
    ]);
    held.note(subscribe(2, 'parse://Order/count'), []);
    // An answer to another request (a progress notification has no id) proves nothing.
    held.note(subscribe(3, 'parse://Order/samples'), [
      { jsonrpc: '2.0', method: 'notifications/progress' },
      { jsonrpc: '2.0', id: 99, result: {} },
    ]);
    held.note({ jsonrpc: '2.0', id: 4, method: 'resources/subscribe', params: {} }, [
      { jsonrpc: '2.0', id: 4, result: {} },
    ]);
    held.note({ jsonrpc: '2.0', id: 5, method: 'tools/list' }, [
      { jsonrpc: '2.0', id: 5, result: {} },
    ]);
    expect(held.list()).toEqual([]);
  });
});
