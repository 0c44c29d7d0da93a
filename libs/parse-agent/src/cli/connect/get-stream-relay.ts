import type { HttpSessionRelay } from './http-session-relay';
import { BridgeRedirectRefusedError } from './same-origin-fetch';

/** Waits before reopening a GET stream that broke off (the last one repeats). */
export const STREAM_RETRY_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

/**
 * The server's own notifications (list changes, logging, resource updates) on the session's GET
 * stream, relayed until `signal` aborts. A stream that breaks off is reopened with `Last-Event-ID`
 * after a wait that grows (STREAM_RETRY_MS). When the server no longer knows the session (404: it
 * expired or the server restarted) a new session is started, so a client that only listens keeps
 * hearing; a server without such a stream (405) or one that refuses it is left alone.
 */
export async function relayGetStream(
  session: HttpSessionRelay,
  fetchOnOrigin: (init: RequestInit) => Promise<Response>,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<void> {
  let lastEventId: string | undefined;
  // Sessions started for this stream since it last opened: a second in a row means stop trying.
  let renewals = 0;
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      const used = session.sessionId;
      const response = await fetchOnOrigin({
        method: 'GET',
        headers: session.headers({
          Accept: 'text/event-stream',
          ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
        }),
        signal,
      });
      // 404: the server forgot the session; a new one (once or twice) and the stream again.
      if (response.status === 404 && used && renewals < 2 && !signal.aborted) {
        await response.body?.cancel().catch(() => undefined);
        renewals += 1;
        if (await session.renewAfter(used)) {
          // Event ids belong to the old session's stream.
          lastEventId = undefined;
          continue;
        }
      }
      // 405: this server offers no such stream; anything else but 200 is not worth retrying.
      if (response.status !== 200 || !response.body) {
        await response.body?.cancel().catch(() => undefined);
        if (response.status !== 405) {
          log(
            `the server at ${session.url} refused its notification stream (HTTP ${response.status})`,
          );
        }
        return;
      }
      attempt = 0;
      renewals = 0;
      await session.relayBody(response, true, (id) => (lastEventId = id));
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof BridgeRedirectRefusedError) return log(error.message);
    }
    const delay = STREAM_RETRY_MS[Math.min(attempt, STREAM_RETRY_MS.length - 1)];
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
  }
}
