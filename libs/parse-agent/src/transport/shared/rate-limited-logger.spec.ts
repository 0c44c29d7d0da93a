import { RateLimitedLogger } from './rate-limited-logger';

describe('RateLimitedLogger', () => {
  function setup() {
    const lines: string[] = [];
    let now = 0;
    const logger = new RateLimitedLogger(
      { warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) },
      { perWindow: 3, windowMs: 1000, now: () => now },
    );
    return { lines, logger, advance: (ms: number) => (now += ms) };
  }

  it('writes at most perWindow warnings of one kind per window, then reports how many it dropped', () => {
    const { lines, logger, advance } = setup();
    for (let i = 0; i < 100; i++) logger.warn(`Unauthorized: attempt ${i}`);
    expect(lines).toEqual([
      'warn Unauthorized: attempt 0',
      'warn Unauthorized: attempt 1',
      'warn Unauthorized: attempt 2',
    ]);
    advance(1000);
    logger.warn('Unauthorized: again');
    expect(lines.slice(3)).toEqual([
      'warn Unauthorized: 97 similar warning(s) suppressed in the last window',
      'warn Unauthorized: again',
    ]);
  });

  it('counts kinds separately and never drops errors', () => {
    const { lines, logger } = setup();
    for (let i = 0; i < 5; i++) logger.warn(`Host refused: ${i}`);
    logger.warn('Origin refused: x');
    for (let i = 0; i < 5; i++) logger.error(`boom ${i}`);
    expect(lines.filter((l) => l.startsWith('warn Host'))).toHaveLength(3);
    expect(lines).toContain('warn Origin refused: x');
    expect(lines.filter((l) => l.startsWith('error'))).toHaveLength(5);
  });
});
