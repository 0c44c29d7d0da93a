import {
  negotiateProtocolVersion,
  PROTOCOL_VERSION,
  SERVER_CAPABILITIES,
  serverCapabilities,
  SUPPORTED_PROTOCOL_VERSIONS,
} from './protocol.constants';

describe('protocol constants', () => {
  it('prefers 2025-06-18 and negotiates the four known revisions', () => {
    expect(PROTOCOL_VERSION).toBe('2025-06-18');
    expect(SUPPORTED_PROTOCOL_VERSIONS).toEqual([
      '2026-07-28',
      '2025-11-25',
      '2025-06-18',
      '2025-03-26',
      '2024-11-05',
    ]);
  });

  it.each(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'])(
    'echoes the supported revision %s',
    (version) => expect(negotiateProtocolVersion(version)).toBe(version),
  );

  // 2026-07-28 has no initialize: a client asking for it there gets the legacy default.
  it.each([undefined, null, 20250618, '2099-01-01', '', ['2025-06-18'], '2026-07-28'])(
    'answers 2025-06-18 for %p',
    (requested) => expect(negotiateProtocolVersion(requested)).toBe('2025-06-18'),
  );

  it('advertises list changes for tools and prompts only, and hands out copies', () => {
    expect(serverCapabilities()).toEqual({
      tools: { listChanged: true },
      resources: { subscribe: false, listChanged: false },
      prompts: { listChanged: true },
    });
    const copy = serverCapabilities();
    copy.tools.listChanged = false;
    expect(SERVER_CAPABILITIES.tools.listChanged).toBe(true);
    expect(Object.isFrozen(SERVER_CAPABILITIES.resources)).toBe(true);
  });
});
