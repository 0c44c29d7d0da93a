import { randomHex } from './random-hex';

describe('randomHex', () => {
  it('gives 2 hex characters per byte', () => {
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomHex(1)).toMatch(/^[0-9a-f]{2}$/);
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });

  it('never repeats a value across many pool refills', () => {
    const seen = new Set<string>();
    // 20,000 x 8 bytes = about 40 refills of the 4 KiB pool.
    for (let i = 0; i < 20_000; i++) seen.add(randomHex(8));
    expect(seen.size).toBe(20_000);
  });

  it('spreads over every hex digit', () => {
    const text = Array.from({ length: 200 }, () => randomHex(8)).join('');
    for (const digit of '0123456789abcdef') expect(text).toContain(digit);
  });
});
