import { formatTable } from './format-table';
import { terminalJson, terminalSafe } from './terminal-text';

/**
 * The code points that must never reach a terminal raw, written out here independently of the
 * implementation's character class: C0, DEL, C1, soft hyphen, bidi marks/embeddings/overrides/
 * isolates, zero-width and invisible characters, line/paragraph separators, tag characters.
 */
const HIDDEN_RANGES: Array<[number, number]> = [
  [0x0000, 0x001f],
  [0x007f, 0x009f],
  [0x00ad, 0x00ad],
  [0x061c, 0x061c],
  [0x180e, 0x180e],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2064],
  [0x2066, 0x2069],
  [0xfeff, 0xfeff],
  [0xe0000, 0xe007f],
];
const isHidden = (code: number) => HIDDEN_RANGES.some(([from, to]) => code >= from && code <= to);
const hiddenCodes = HIDDEN_RANGES.flatMap(([from, to]) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i),
);
/** A raw hidden character anywhere in the text (newline and tab allowed when `keep`). */
const rawHidden = (text: string, keep = '') =>
  [...text].filter((c) => isHidden(c.codePointAt(0)!) && !keep.includes(c));

/** An independent decoder for the escapes terminalSafe writes (valid for input without '\'). */
function decode(text: string): string {
  return text.replace(/\\x([0-9a-f]{2})|\\u\{([0-9a-f]+)\}|\\u([0-9a-f]{4})/g, (_m, x, u, v) =>
    String.fromCodePoint(parseInt(x ?? u ?? v, 16)),
  );
}

/** A deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Strings mixing hidden characters, escape sequences, printable text, CJK, emoji (no '\'). */
function generated(count: number, seed = 31): string[] {
  const next = random(seed);
  const pieces = [
    () => String.fromCodePoint(hiddenCodes[Math.floor(next() * hiddenCodes.length)]),
    () => '\x1b[2J\x1b[H', // clear screen, cursor home
    () => '\x1b]52;c;aGVsbG8=\x07', // OSC 52: write the clipboard
    () => '\x1b]0;owned\x07', // set the window title
    () => '\u009b31m', // C1 CSI
    () => 'ab\u202ecod.exe', // right-to-left override
    () => 'plain text ',
    () => 'naïve café 東京 ',
    () => '👩‍💻',
    () => String.fromCharCode(0x20 + Math.floor(next() * 0x5b)).replace('\\', '/'),
  ];
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(next() * 12) }, () =>
      pieces[Math.floor(next() * pieces.length)](),
    ).join(''),
  );
}

describe('terminalSafe', () => {
  it('escapes every code point of U+0000-U+009F and the listed ranges, and nothing else in the BMP', () => {
    const wrong: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue; // surrogates are not characters alone
      const char = String.fromCodePoint(code);
      const hex = code.toString(16);
      const expected = !isHidden(code)
        ? char
        : code < 0x100
          ? `\\x${hex.padStart(2, '0')}`
          : `\\u${hex.padStart(4, '0')}`;
      if (terminalSafe(char) !== expected) wrong.push(`U+${hex}`);
    }
    expect(wrong).toEqual([]);
  });

  it('escapes the tag characters (invisible ASCII look-alikes) and leaves other astral characters', () => {
    for (let code = 0xe0000; code <= 0xe007f; code++) {
      expect(terminalSafe(String.fromCodePoint(code))).toBe(`\\u{${code.toString(16)}}`);
    }
    for (const code of [0x1f600, 0x1d400, 0x20000, 0xe0100, 0x10ffff]) {
      expect(terminalSafe(String.fromCodePoint(code))).toBe(String.fromCodePoint(code));
    }
  });

  it('leaves no raw hidden character in generated text, in any mode, and decodes back to the input', () => {
    for (const text of generated(3000)) {
      const line = terminalSafe(text);
      expect(rawHidden(line)).toEqual([]);
      expect(decode(line)).toBe(text);
      const multi = terminalSafe(text, 'multiline');
      expect(rawHidden(multi, '\n\t')).toEqual([]);
      expect(decode(multi)).toBe(text);
    }
  });

  it('keeps JSON output valid and equal to the value it printed', () => {
    for (const text of generated(2000, 7)) {
      const value = { [text]: [text, { nested: text }], n: 1 };
      const out = terminalJson(value);
      expect(rawHidden(out, '\n')).toEqual([]);
      expect(JSON.parse(out)).toEqual(value);
    }
    expect(terminalJson({ a: '\u009b\u202e\u{e0041}' })).toBe(
      '{\n  "a": "\\u009b\\u202e\\udb40\\udc41"\n}',
    );
  });

  it('shows the classic attacks as the escapes an operator can read', () => {
    expect(terminalSafe('\x1b]52;c;aGVsbG8=\x07')).toBe('\\x1b]52;c;aGVsbG8=\\x07');
    expect(terminalSafe('\x1b[2J')).toBe('\\x1b[2J');
    expect(terminalSafe('invoice\u202efdp.exe')).toBe('invoice\\u202efdp.exe');
    expect(terminalSafe('a\r\nb')).toBe('a\\x0d\\x0ab');
    expect(terminalSafe('a\r\nb\tc', 'multiline')).toBe('a\\x0d\nb\tc');
  });
});

describe('formatTable', () => {
  it('prints no raw hidden character from cells or column names, and still lines up', () => {
    const rows = generated(200, 3).map((text, i) => ({
      objectId: `id${i}`,
      [text]: text,
      note: text,
    }));
    const table = formatTable(rows);
    expect(rawHidden(table, '\n')).toEqual([]);
    const lines = table.split('\n');
    // Every cell stays on its line: a header, a rule and one line per row, then the note on the
    // columns past 12.
    expect(lines).toHaveLength(rows.length + 3);
    expect(lines[rows.length + 2]).toMatch(/^\(\d+ more column\(s\) not shown: /);
    expect(formatTable([{ name: 'x\x1b[2Jy', 'k\u202e': '\u200b' }])).toBe(
      ['name       k\\u202e', '---------  -------', 'x\\x1b[2Jy  \\u200b'].join('\n'),
    );
  });
});
