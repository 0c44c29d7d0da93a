import type { Readable } from 'node:stream';

export interface LineReaderOptions {
  /** Longest accepted line in bytes; a longer one is dropped as it arrives (memory stays bounded). */
  maxLineBytes: number;
  onLine: (line: string) => void;
  /** A line went over the cap and was dropped. */
  onTooLong: () => void;
  /** The input ended (after the last line, including one without a closing newline). */
  onEnd: () => void;
}

export interface LineReader {
  /** Stops reading and reports the end (idempotent). */
  end(): void;
}

const NEWLINE = 0x0a;

/** Newline-delimited framing over a byte stream, shared by the stdio server and the HTTP bridge. */
export function readLines(input: Readable, options: LineReaderOptions): LineReader {
  const { maxLineBytes } = options;
  let buffered: Buffer[] = [];
  let bufferedBytes = 0;
  let discarding = false;
  let ended = false;

  const reset = () => {
    buffered = [];
    bufferedBytes = 0;
  };
  const onData = (chunk: Buffer | string) => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (let at = data.indexOf(NEWLINE); at !== -1; at = data.indexOf(NEWLINE)) {
      const head = data.subarray(0, at);
      data = data.subarray(at + 1);
      if (discarding) {
        discarding = false;
        continue;
      }
      if (bufferedBytes + head.length > maxLineBytes) {
        options.onTooLong();
        reset();
        continue;
      }
      const line = Buffer.concat([...buffered, head]).toString('utf8');
      reset();
      options.onLine(line);
    }
    if (!data.length || discarding) return;
    if (bufferedBytes + data.length > maxLineBytes) {
      // Drop the rest of this line as it arrives.
      options.onTooLong();
      reset();
      discarding = true;
      return;
    }
    buffered.push(Buffer.from(data));
    bufferedBytes += data.length;
  };
  const end = () => {
    if (ended) return;
    if (bufferedBytes && !discarding) options.onLine(Buffer.concat(buffered).toString('utf8'));
    reset();
    ended = true;
    input.off('data', onData);
    options.onEnd();
  };

  input.on('data', onData);
  input.once('end', end);
  input.once('close', end);
  return { end };
}
