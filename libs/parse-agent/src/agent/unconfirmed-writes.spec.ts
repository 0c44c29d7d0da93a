import { resetSecurityBanners } from '../core/security-banner';
import { warnUnconfirmedWrites } from './unconfirmed-writes';

describe('warning about writes without confirmation (issue 31, item 11)', () => {
  const banners: string[] = [];
  const writesOn = { PARSE_AGENT_ALLOW_WRITE_TOOLS: 'true' };
  beforeEach(() => {
    banners.length = 0;
    resetSecurityBanners((line) => banners.push(line));
  });
  afterAll(() => resetSecurityBanners(() => undefined));

  it('warns once when write tools are on and a writing agent asks no one', () => {
    const agent = { confirmationRequired: false, permissions: 'admin' as const };
    expect(warnUnconfirmedWrites(agent, writesOn)).toBe(true);
    expect(warnUnconfirmedWrites({ ...agent, permissions: 'write' }, writesOn)).toBe(false);
    expect(banners).toHaveLength(1);
    expect(banners[0]).toMatch(/PARSE_AGENT_ALLOW_WRITE_TOOLS.*confirmationRequired: false/);
  });

  it('stays silent when confirmations are on, writes are off, or the agent cannot write', () => {
    expect(
      warnUnconfirmedWrites({ confirmationRequired: true, permissions: 'admin' }, writesOn),
    ).toBe(false);
    expect(warnUnconfirmedWrites({ permissions: 'admin' }, writesOn)).toBe(false);
    expect(warnUnconfirmedWrites({ confirmationRequired: false, permissions: 'admin' }, {})).toBe(
      false,
    );
    expect(
      warnUnconfirmedWrites({ confirmationRequired: false, permissions: 'readonly' }, writesOn),
    ).toBe(false);
    expect(warnUnconfirmedWrites(undefined, writesOn)).toBe(false);
    expect(banners).toEqual([]);
  });
});
