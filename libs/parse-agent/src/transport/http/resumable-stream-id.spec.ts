import { newStreamId, streamOwnedBy } from './resumable-stream-id';

describe('resumable stream ids', () => {
  it('are bound to the principal that opened them', () => {
    const id = newStreamId('owner-a');
    expect(streamOwnedBy(id, 'owner-a')).toBe(true);
    expect(streamOwnedBy(id, 'owner-b')).toBe(false);
    expect(streamOwnedBy(`${id.split('.')[0]}.forged`, 'owner-a')).toBe(false);
    expect(newStreamId('owner-a')).not.toBe(id);
  });
});
