import {
  resetSecurityBanners,
  routeSecurityBanners,
  securityBanner,
  suppressSecurityBanners,
} from './security-banner';

describe('security banners', () => {
  afterEach(() => resetSecurityBanners());

  it("go to the host's logger once routed there, as the message alone", () => {
    const logged: string[] = [];
    resetSecurityBanners();
    routeSecurityBanners((message) => logged.push(message));
    expect(securityBanner('k1', 'Master key in use.')).toBe(true);
    expect(securityBanner('k1', 'Master key in use.')).toBe(false);
    expect(logged).toEqual(['Master key in use.']);
  });

  it('go to stderr with their marker by default, and nowhere when suppressed', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      resetSecurityBanners();
      securityBanner('k2', 'Unhidden class.');
      expect(write).toHaveBeenCalledWith('[parse-agent:SECURITY] Unhidden class.\n');
      write.mockClear();
      suppressSecurityBanners();
      expect(securityBanner('k3', 'Anything.')).toBe(false);
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
    }
  });
});
