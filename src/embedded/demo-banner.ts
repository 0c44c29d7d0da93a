import { join } from 'node:path';
import type { DemoSettings } from './demo-config';

export interface DemoBannerFacts {
  settings: DemoSettings;
  /** The listening address as a user reaches it, e.g. http://127.0.0.1:3000. */
  base: string;
  parseServerURL: string;
  mcpApiKey: string;
  /** The embedded cluster's URI (embedded mode only). */
  embeddedPostgresURI?: string;
}

/** What the demo prints once it is up: where everything is and how to connect. */
export function demoBanner(facts: DemoBannerFacts): string {
  const { settings, base, parseServerURL, mcpApiKey, embeddedPostgresURI } = facts;
  const directPostgres =
    embeddedPostgresURI || (settings.mode === 'external' && settings.postgresURI);
  const lines = [
    '',
    `  nestjs-parse-agent demo is up (${settings.mode === 'embedded' ? 'embedded PostgreSQL + Parse Server' : 'existing Parse Server'})`,
    `  Health:      ${base}/health/ready   (liveness: ${base}/health/live)`,
    `  Parse URL:   ${parseServerURL}   app id: ${settings.appId}`,
    `  MCP URL:     ${base}/mcp   (Streamable HTTP; see docs/mcp-endpoint.md)`,
    `  Analytics:   ${directPostgres ? 'direct PostgreSQL path (row ACL, CLP and protectedFields enforced in SQL)' : 'Parse REST only (set POSTGRES_URI for the direct PostgreSQL path)'}`,
    `  Console:     ${base}/console/   (sign in as a demo user or with the operator key; see docs/console.md)`,
    `  MCP auth:    Authorization: Bearer <Parse session token>   or   X-MCP-API-Key: ${mcpApiKey}${settings.mcpApiKey ? ' (from MCP_API_KEY)' : ` (kept in ${join(settings.dataDir, 'mcp-api-key')}; set MCP_API_KEY to choose one)`}`,
    `  Rate limit:  ${settings.rateLimitPerMinute} tool calls per minute per caller (MCP_RATE_LIMIT)`,
  ];
  if (settings.mode === 'embedded' && embeddedPostgresURI) {
    lines.push(
      `  PostgreSQL:  ${embeddedPostgresURI}`,
      `               (the demo's local dev database, credentials included: another app's direct path can use it)`,
      `  Data dir:    ${settings.dataDir}`,
      `  Demo users:  alice (tenant acme), bob (tenant globex), carol (admin); password "${settings.demoPassword}"`,
      `  Log in:      curl -s -X POST ${parseServerURL}/login -H 'X-Parse-Application-Id: ${settings.appId}' \\`,
      `                 -H 'Content-Type: application/json' -d '{"username":"alice","password":"${settings.demoPassword}"}'`,
    );
  }
  lines.push('');
  return lines.join('\n') + '\n';
}
