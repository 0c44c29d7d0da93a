import { truncatedIncludePayload } from './truncated-include-fields';

describe('truncatedIncludePayload', () => {
  it('is undefined when nothing was narrowed', () => {
    expect(truncatedIncludePayload(undefined)).toBeUndefined();
    expect(truncatedIncludePayload(null)).toBeUndefined();
    expect(truncatedIncludePayload({})).toBeUndefined();
  });

  it('copies the per-pointer lists, keeping empty ones and skipping malformed entries', () => {
    const input = { author: ['bio'], editor: [], broken: null as unknown as string[] };
    const out = truncatedIncludePayload(input)!;
    expect(out).toEqual({ author: ['bio'], editor: [] });
    input.author.push('avatar');
    expect(out.author).toEqual(['bio']);
  });
});
