/**
 * Security banners are written once per process. By default they go to stderr; a host with a
 * logger routes them through it (`routeSecurityBanners`, as the Nest module does), so they land in
 * the same stream and format as every other log line. Deployments that made the choice on purpose
 * (a global master-key MCP server, an unhidden class) silence them with `suppressSecurityBanners()`.
 */
export type SecurityBannerSink = (message: string) => void;

const shown = new Set<string>();
let suppressed = false;
const stderrSink: SecurityBannerSink = (message) =>
  process.stderr.write(`[parse-agent:SECURITY] ${message}\n`);
let sink: SecurityBannerSink = stderrSink;

export function suppressSecurityBanners(value = true): void {
  suppressed = value;
}

export function securityBannersSuppressed(): boolean {
  return suppressed;
}

/** Sends banners to `output` (a logger's warn, say); without it, back to stderr. */
export function routeSecurityBanners(output?: SecurityBannerSink): void {
  sink = output ?? stderrSink;
}

/** Test hook: forget which banners were shown and where they go. */
export function resetSecurityBanners(output?: SecurityBannerSink): void {
  shown.clear();
  suppressed = false;
  routeSecurityBanners(output);
}

/** Writes the banner unless suppressed; with `once`, only the first time per process. */
export function securityBanner(key: string, message: string, once = true): boolean {
  if (suppressed || (once && shown.has(key))) return false;
  shown.add(key);
  sink(message);
  return true;
}

/**
 * Writes a security log line (a denied call, a master-key audit line) to where banners go: the
 * host's logger when routed, else stderr. Never suppressed: banners are once-per-process
 * reminders an operator may silence, these lines are the trail of what happened.
 */
export function securityLog(line: string): void {
  sink(line);
}
