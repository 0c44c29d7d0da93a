import { tierReaches, type PermissionLevel } from '../core/constants';
import { securityBanner } from '../core/security-banner';
import { ENV_GATES, gateEnabled } from '../tools/env-gates';

/**
 * Warns once per process (a security banner) when the operator switched write tools on
 * (PARSE_AGENT_ALLOW_WRITE_TOOLS) and an agent that may write runs with confirmations off: its
 * destructive calls then run without a person saying yes whenever the client cannot ask. Called
 * when such an agent is built, and at module start for the module's `defaults`.
 */
export function warnUnconfirmedWrites(
  agent: { confirmationRequired?: boolean; permissions?: PermissionLevel } | undefined,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (agent?.confirmationRequired !== false) return false;
  if (!tierReaches(agent.permissions ?? 'readonly', 'write')) return false;
  if (!gateEnabled('writeTools', env)) return false;
  return securityBanner(
    'writes-without-confirmation',
    `Write tools are on (${ENV_GATES.writeTools}) and an agent that may write runs with confirmationRequired: false: delete_object, delete_class and admin agent methods then run without a person's confirmation when the client cannot ask. Keep confirmationRequired at its default (true) unless every such call is confirmed some other way.`,
  );
}
