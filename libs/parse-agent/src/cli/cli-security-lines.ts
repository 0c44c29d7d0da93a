import {
  routeSecurityBanners,
  securityBanner,
  suppressSecurityBanners,
} from '../core/security-banner';
import { CLI_ENV, type CliSettings } from './cli-settings';

/** The key of the library's master-key banner: the CLI shows its own text in its place. */
const MASTER_KEY_BANNER = 'master-key-agent';

/**
 * How a CLI run shows the library's security lines. The library's banners speak to a developer
 * (`suppressSecurityBanners()`); a CLI user gets one short line per run instead, in the CLI's
 * terms, and `--quiet` hides it. The per-call `AUDIT master-key call` lines are the trail a log
 * keeps (stdio under a desktop client, serve, a script's stderr), not something a person at a
 * terminal needs after every command: they are left out when stderr is a terminal, and with
 * --quiet. Denials (`SECURITY ...`) and errors are always shown.
 */
export function routeCliSecurityLines(
  settings: CliSettings,
  log: (line: string) => void,
  stderrIsTerminal: boolean,
): void {
  if (settings.quiet) suppressSecurityBanners();
  routeSecurityBanners((line) => {
    if (line.startsWith('AUDIT ') && (settings.quiet || stderrIsTerminal)) return;
    log(`[parse-agent:SECURITY] ${line}`);
  });
  if (settings.identity.kind === 'master') {
    securityBanner(
      MASTER_KEY_BANNER,
      `Acting as the operator with the master key: Parse ACLs, class-level permissions and protected fields do not apply (your models' hidden classes, field lists and tenant scopes still do). To act as a user, set ${CLI_ENV.sessionToken} or --username; --quiet hides this line.`,
    );
  }
}
