/** What this reads of a relayed JSON-RPC message (the relay's own type imports this file). */
interface RelayedMessage {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

/**
 * The resource subscriptions the client holds through the bridge, as the server confirmed them:
 * a `resources/subscribe` whose answer was a result adds its URI, a `resources/unsubscribe` removes
 * it. Subscriptions belong to the server's session, so when the bridge has to start a new one they
 * are made again there; without this the client would wait for updates that never come.
 */
export class RelayedSubscriptions {
  protected readonly uris = new Set<string>();

  /** Records what one relayed request did, given the messages the server answered with. */
  note(request: RelayedMessage, answers: readonly RelayedMessage[]): void {
    const method = request.method;
    if (method !== 'resources/subscribe' && method !== 'resources/unsubscribe') return;
    const uri = (request.params as { uri?: unknown } | undefined)?.uri;
    if (typeof uri !== 'string') return;
    if (method === 'resources/unsubscribe') {
      // Gone on the client's side whatever the server said: never made again.
      this.uris.delete(uri);
      return;
    }
    const answer = answers.find((m) => m.id === request.id && m.id !== undefined);
    if (answer && answer.result !== undefined && answer.error === undefined) this.uris.add(uri);
  }

  /** The URIs to subscribe to again, in the order they were first subscribed. */
  list(): string[] {
    return [...this.uris];
  }

  /** A subscription the new session refused: the client is told to re-read, then it is dropped. */
  forget(uri: string): void {
    this.uris.delete(uri);
  }
}
