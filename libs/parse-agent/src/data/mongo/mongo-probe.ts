import {
  isTimeout,
  PROBE_OK,
  redactedEndpoint,
  scrub,
  withTimeout,
  type ProbeOutcome,
} from '../probe';

/** One read on the MongoDB path (`probe` comes from the data path); never quotes the password. */
export async function probeMongo(
  probe: (signal: AbortSignal) => Promise<void>,
  uri: string | undefined,
  timeoutMs: number,
): Promise<ProbeOutcome> {
  const setting = uri ? 'mongo.uri' : 'mongo.client';
  const where = uri ? redactedEndpoint(uri) : 'the client in mongo.client';
  try {
    await withTimeout(timeoutMs, probe);
    return PROBE_OK;
  } catch (error) {
    const message = isTimeout(error)
      ? `MongoDB at ${where} did not answer within ${timeoutMs} ms.`
      : `MongoDB at ${where} refused the connection or the query: ${scrub((error as Error)?.message ?? String(error), uri)}.`;
    return { ok: false, setting, transient: false, message };
  }
}
