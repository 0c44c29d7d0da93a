import type { ToolEnvelope } from 'nestjs-parse-agent';

/** Tool data, read loosely: tests index into it freely. */
export type Data = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The data of a successful envelope; a failure fails the test with its code and message. */
export function ok(envelope: ToolEnvelope): Data {
  if (!envelope.success)
    throw new Error(`expected success, got ${envelope.error_code}: ${envelope.error}`);
  return envelope.data as Data;
}

/** A refused envelope; a success fails the test and shows the start of what came back. */
export function refused(envelope: ToolEnvelope) {
  if (envelope.success)
    throw new Error(`expected a refusal, got data ${JSON.stringify(envelope.data).slice(0, 200)}`);
  return envelope;
}
