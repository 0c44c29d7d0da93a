import { cellText, renderTabular } from './tabular';

describe('renderTabular', () => {
  it('renders nothing for no rows', () => {
    for (const format of ['csv', 'markdown', 'table'] as const) {
      expect(renderTabular([], format)).toEqual({ headers: [], output: '' });
    }
  });

  it('takes columns from the first row only, minus wrapper, ACL and secret columns', () => {
    const rows = [
      {
        objectId: 'a',
        __type: 'Object',
        className: 'Post',
        ACL: {},
        _rperm: ['*'],
        _wperm: [],
        _hashed_password: 'hash',
        _session_token: 'r:tok',
        title: 'One',
      },
      { objectId: 'b', title: 'Two', late: 'only in row two' },
    ];
    const { headers, output } = renderTabular(rows, 'csv');
    expect(headers).toEqual(['objectId', 'title']);
    expect(output).toBe('objectId,title\na,One\nb,Two');
    for (const hidden of ['hash', 'r:tok', 'late', 'only in row two', 'Post', '_rperm']) {
      expect(output).not.toContain(hidden);
    }
  });

  it('renders no output when every first-row column is excluded', () => {
    expect(renderTabular([{ ACL: {}, className: 'X' }], 'table')).toEqual({
      headers: [],
      output: '',
    });
  });

  describe('cell values', () => {
    it('maps null/undefined to empty, keeps strings, JSON-encodes structures', () => {
      expect(cellText(null)).toBe('');
      expect(cellText(undefined)).toBe('');
      expect(cellText('x')).toBe('x');
      expect(cellText({ __type: 'Pointer', className: 'A', objectId: '1' })).toBe(
        '{"__type":"Pointer","className":"A","objectId":"1"}',
      );
      expect(cellText([1, 'a'])).toBe('[1,"a"]');
      expect(cellText(3.5)).toBe('3.5');
      expect(cellText(false)).toBe('false');
    });

    it('leaves cells empty for columns a later row lacks', () => {
      const { output } = renderTabular([{ a: 1, b: 2 }, { a: 3 }], 'csv');
      expect(output).toBe('a,b\n1,2\n3,');
    });
  });

  describe('csv', () => {
    it('quotes commas, quotes and line breaks per RFC 4180', () => {
      const { output } = renderTabular(
        [
          {
            name: 'Smith, Jane',
            quote: 'say "hi"',
            multi: 'line1\nline2',
            cr: 'a\rb',
            plain: 'ok',
          },
        ],
        'csv',
      );
      expect(output).toBe(
        'name,quote,multi,cr,plain\n"Smith, Jane","say ""hi""","line1\nline2","a\rb",ok',
      );
    });

    it('does not quote plain fields', () => {
      expect(renderTabular([{ a: 'x y', b: 7 }], 'csv').output).toBe('a,b\nx y,7');
    });

    it('quotes JSON cells because they contain commas and quotes', () => {
      expect(renderTabular([{ tags: ['a', 'b'] }], 'csv').output).toBe('tags\n"[""a"",""b""]"');
    });
  });

  describe('markdown', () => {
    it('renders header, separator and rows', () => {
      const { output } = renderTabular(
        [
          { a: 1, b: 'x' },
          { a: 2, b: null },
        ],
        'markdown',
      );
      expect(output).toBe('| a | b |\n| --- | --- |\n| 1 | x |\n| 2 |  |');
    });

    it('escapes pipes and backslashes and flattens line breaks', () => {
      const { output } = renderTabular(
        [{ v: 'a|b', w: 'c\\d', x: 'one\ntwo\r\nthree' }],
        'markdown',
      );
      const lines = output.split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[2]).toBe('| a\\|b | c\\\\d | one two three |');
      // Each row still has exactly one unescaped pipe per column boundary.
      expect(lines[2].replace(/\\\|/g, '').split('|')).toHaveLength(5);
    });
  });

  describe('table', () => {
    it('draws an ASCII grid with cells padded to the column width', () => {
      const { output } = renderTabular(
        [
          { id: 'a', title: 'Short' },
          { id: 'bbbb', title: null },
        ],
        'table',
      );
      expect(output).toBe(
        [
          '+------+-------+',
          '| id   | title |',
          '+------+-------+',
          '| a    | Short |',
          '| bbbb |       |',
          '+------+-------+',
        ].join('\n'),
      );
    });

    it('keeps every line the same width, even with line breaks and emoji in cells', () => {
      const { output } = renderTabular(
        [{ note: 'multi\nline', icon: '🙂' }, { note: 'x' }],
        'table',
      );
      const lines = output.split('\n');
      expect(lines).toHaveLength(6);
      const widths = new Set(lines.map((line) => [...line].length));
      expect(widths.size).toBe(1);
      expect(output).toContain('| multi line |');
    });
  });

  it('refuses an unknown format with a message naming the valid ones', () => {
    expect(() => renderTabular([{ a: 1 }], 'xml' as never)).toThrow(/csv, markdown, table/);
  });
});
