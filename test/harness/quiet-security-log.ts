import { routeSecurityBanners } from '../../libs/parse-agent/src/core/security-banner';

// Every master-key tool call writes a one-line audit (see docs/security.md); across the suite
// that is thousands of lines of noise on stderr. Tests that check those lines route them to a
// sink of their own (routeSecurityBanners / resetSecurityBanners, or a Nest logger).
routeSecurityBanners(() => undefined);
