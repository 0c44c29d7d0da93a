import type { SessionVerifierOptions } from './session-verifier';
import { tenantSourceProblem, type TenantSource } from './tenant-source';

/**
 * The `auth` section of the module options: what the shipped guards (ParseSessionGuard,
 * McpApiKeyGuard, ParseAgentAuthGuard) check. Give it through `forRootAsync`'s `useFactory` to read
 * it from ConfigService.
 */
export interface ParseAgentAuthOptions {
  /** The operator key accepted in `X-MCP-API-Key` (compared in constant time). */
  apiKey?: string;
  /** How Parse session tokens are checked: cache time, timeout, cache size. */
  session?: SessionVerifierOptions;
  /** Where a signed-in user's tenant comes from (see TenantSource); absent, users have none. */
  tenant?: TenantSource;
}

/** What is wrong with an `auth` section (each entry names the setting), or nothing. */
export function authOptionsProblems(auth: unknown): string[] {
  if (typeof auth !== 'object' || auth === null || Array.isArray(auth))
    return ['auth must be an object: { apiKey?, session?, tenant? }.'];
  const { apiKey, session, tenant, ...rest } = auth as Record<string, unknown>;
  const problems = Object.keys(rest).map(
    (key) => `auth.${key} is not a setting; use apiKey, session or tenant.`,
  );
  if (apiKey !== undefined && (typeof apiKey !== 'string' || !apiKey.trim()))
    problems.push('auth.apiKey must be a non-empty string (or left out).');
  if (session !== undefined) {
    if (typeof session !== 'object' || session === null) {
      problems.push('auth.session must be an object: { cacheTtlMs?, timeoutMs?, maxEntries? }.');
    } else {
      const s = session as Record<string, unknown>;
      for (const key of ['cacheTtlMs', 'maxEntries'] as const) {
        if (s[key] !== undefined && !(typeof s[key] === 'number' && s[key] >= 0))
          problems.push(`auth.session.${key} must be a non-negative number.`);
      }
      if (s.timeoutMs !== undefined && !(typeof s.timeoutMs === 'number' && s.timeoutMs > 0))
        problems.push('auth.session.timeoutMs must be a positive number of milliseconds.');
    }
  }
  if (tenant !== undefined) {
    const problem = tenantSourceProblem(tenant);
    if (problem) problems.push(`auth.tenant ${problem}`);
  }
  return problems;
}
