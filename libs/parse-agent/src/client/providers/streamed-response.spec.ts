import type { LlmStreamEvent } from '../../ports/llm-provider';
import { StreamedResponse } from './streamed-response';

function recorder() {
  const events: LlmStreamEvent[] = [];
  return { events, streamed: new StreamedResponse((e) => events.push(e)) };
}

describe('StreamedResponse', () => {
  it('reports text as it arrives and keeps the whole of it', () => {
    const { events, streamed } = recorder();
    streamed.addText('forty ');
    streamed.addText('two');
    expect(events).toEqual([
      { type: 'text', text: 'forty ' },
      { type: 'text', text: 'two' },
    ]);
    expect(streamed.response('m').text).toBe('forty two');
  });

  it('reports a tool call only once it is closed, with its pieces joined and parsed', () => {
    const { events, streamed } = recorder();
    streamed.addToolCallPart(0, { id: 'c1', name: 'count_', args: '{"class_' });
    streamed.addToolCallPart(0, { name: 'objects', args: 'name":"Order"}' });
    expect(events).toEqual([]);
    streamed.closeToolCall(0);
    const call = { id: 'c1', name: 'count_objects', arguments: { class_name: 'Order' } };
    expect(events).toEqual([{ type: 'tool_call', call }]);
    expect(streamed.response('m').toolCalls).toEqual([call]);
  });

  it('closing an index with no open call reports nothing, and a call is never reported twice', () => {
    const { events, streamed } = recorder();
    streamed.closeToolCall(3);
    streamed.addToolCallPart(1, { id: 'a', name: 't' });
    streamed.closeToolCall(1);
    streamed.closeToolCall(1);
    streamed.closeOpenToolCalls();
    expect(events).toHaveLength(1);
    expect(streamed.hasToolCall(1)).toBe(false);
  });

  it('closes the calls still open in index order, naming one without an id by its position', () => {
    const { streamed } = recorder();
    streamed.addToolCallPart(2, { name: 'b', args: '' });
    streamed.addToolCallPart(0, { id: 'x', name: 'a', args: '[1]' });
    streamed.closeOpenToolCalls();
    expect(streamed.response('m').toolCalls).toEqual([
      { id: 'x', name: 'a', arguments: {}, invalidArguments: 'arguments are not a JSON object' },
      { id: 'call_2', name: 'b', arguments: {} },
    ]);
  });

  it('answers with the requested model only when the stream never named one', () => {
    const { streamed } = recorder();
    expect(streamed.response('requested').model).toBe('requested');
    streamed.model = 'snapshot-2025';
    streamed.stopReason = 'stop';
    streamed.usage.inputTokens = 7;
    expect(streamed.response('requested')).toEqual({
      text: '',
      toolCalls: [],
      usage: { inputTokens: 7, outputTokens: 0 },
      model: 'snapshot-2025',
      stopReason: 'stop',
    });
  });
});
