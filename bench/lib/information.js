'use strict';
// What a tool result tells the model, with the presentation taken out: paging bookkeeping, notes,
// pointer spelling (the old `{_type,class,id}` object vs the "Class$objectId" string) and page
// boundaries. Two results with equal `information(...)` say the same things about the data.
const PAGING_KEYS = new Set([
  'pagination',
  'truncated',
  'truncated_note',
  'next_call',
  'result_count',
  'row_count',
  'elided_fields',
  'elided_note',
  'withheld_fields',
  'withheld_note',
]);

function canonicalValue(value) {
  if (Array.isArray(value)) return value.map(canonicalValue);
  if (value === null || typeof value !== 'object') return value;
  if (value._type === 'Pointer' && typeof value.class === 'string' && typeof value.id === 'string') {
    return `${value.class}$${value.id}`;
  }
  if (typeof value._type === 'string') {
    const { _type, class: cls, id, ...rest } = value;
    const out = { __type: _type };
    if (cls !== undefined) out.className = cls;
    if (id !== undefined) out.objectId = id;
    return canonicalValue({ ...out, ...rest });
  }
  const out = {};
  for (const key of Object.keys(value).sort()) out[key] = canonicalValue(value[key]);
  return out;
}

/** Old pointer JSON inside rendered cells (plain and CSV-doubled quotes) in the new spelling. */
function canonicalText(text) {
  return text
    .replace(/"\{""_type"":""Pointer"",""class"":""(\w+)"",""id"":""(\w+)""\}"/g, '$1$$$2')
    .replace(/\{"_type":"Pointer","class":"(\w+)","id":"(\w+)"\}/g, '$1$$$2');
}

/**
 * The information in the pages of one task: rows (json) or table lines (tabular) in order, plus
 * every other key; `elided` lists fields left out on purpose (named in the result), dropped from
 * both sides before comparing.
 */
function information(pages, elided = []) {
  const rows = [];
  const lines = [];
  let headers;
  let rest = {};
  for (const page of pages) {
    for (const [key, value] of Object.entries(page)) {
      if (PAGING_KEYS.has(key)) continue;
      if (key === 'results' && Array.isArray(value)) {
        for (const row of value) {
          const copy = { ...row };
          for (const field of elided) delete copy[field];
          rows.push(canonicalValue(copy));
        }
      } else if (key === 'output' && typeof value === 'string') {
        const all = canonicalText(value).split('\n');
        const head = page.format === 'markdown' ? 2 : page.format === 'table' ? 3 : 1;
        headers = all.slice(0, head).join('\n');
        lines.push(...all.slice(head).filter((l) => !/^\+[-+]+\+$/.test(l)));
      } else {
        rest[key] = canonicalValue(value);
      }
    }
  }
  return { rows, lines, headers, rest };
}

module.exports = { information, canonicalValue, canonicalText };
