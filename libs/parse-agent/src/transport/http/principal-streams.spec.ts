import { PrincipalStreams } from './principal-streams';

describe('PrincipalStreams', () => {
  it("closes the principal's own oldest stream over the cap, never another principal's", () => {
    const streams = new PrincipalStreams(2);
    const closed: string[] = [];
    const open = (principal: string, name: string) =>
      streams.add(principal, () => closed.push(name));
    open('alice', 'a1');
    open('alice', 'a2');
    open('bob', 'b1');
    open('alice', 'a3');
    expect(closed).toEqual(['a1']);
    expect(streams.count('alice')).toBe(2);
    expect(streams.count('bob')).toBe(1);
  });

  it('frees a slot when a stream ends; releasing twice or after eviction is harmless', () => {
    const streams = new PrincipalStreams(1);
    const closed: string[] = [];
    const release1 = streams.add('alice', () => closed.push('a1'));
    release1();
    release1();
    expect(streams.count('alice')).toBe(0);
    const release2 = streams.add('alice', () => closed.push('a2'));
    streams.add('alice', () => closed.push('a3'));
    expect(closed).toEqual(['a2']);
    release2(); // the evicted stream's own close handler runs later
    expect(streams.count('alice')).toBe(1);
  });
});
