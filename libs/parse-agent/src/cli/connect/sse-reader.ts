/** Parses a text/event-stream body, calling `emit` with each event's data. */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  emit: (data: string) => void,
  onEventId?: (id: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let pending = '';
  let data: string[] = [];
  const dispatch = () => {
    if (data.length) emit(data.join('\n'));
    data = [];
  };
  const field = (line: string) => {
    if (line === '') return dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') data.push(value);
    else if (name === 'id' && onEventId && !value.includes('\0')) onEventId(value);
  };
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    // Lines end in \n or \r\n (a \r\n may straddle two chunks, so split on \n only).
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) field(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
  pending += decoder.decode();
  if (pending) field(pending);
  dispatch();
}
