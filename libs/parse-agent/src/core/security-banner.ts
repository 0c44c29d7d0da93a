/**
 * Security banners go to stderr once per process. Deployments that made the choice on purpose
 * (a global master-key MCP server, an unhidden class) silence them with `suppressSecurityBanners()`.
 */
const shown = new Set<string>();
let suppressed = false;
let sink: (line: string) => void = (line) => process.stderr.write(line + '\n');

export function suppressSecurityBanners(value = true): void {
  suppressed = value;
}

export function securityBannersSuppressed(): boolean {
  return suppressed;
}

/** Test hook: forget which banners were shown and where they go. */
export function resetSecurityBanners(output?: (line: string) => void): void {
  shown.clear();
  suppressed = false;
  sink = output ?? ((line) => process.stderr.write(line + '\n'));
}

/** Prints the banner unless suppressed; with `once`, only the first time per process. */
export function securityBanner(key: string, message: string, once = true): boolean {
  if (suppressed || (once && shown.has(key))) return false;
  shown.add(key);
  sink(`[parse-agent:SECURITY] ${message}`);
  return true;
}
