import { principalOf } from 'nestjs-parse-agent';
import { currentRequestContext } from './request-context';

/**
 * Who made the tool call being reported, for the console's activity feed: the library emits the
 * event inside the call, so the request's context is current (as for the audit log).
 */
export function activityActor(): string | undefined {
  const principal = principalOf(currentRequestContext()?.request);
  if (principal?.kind === 'operator') return 'operator';
  if (principal?.kind === 'user')
    return `${principal.username} (${principal.tenantId ?? 'no tenant'})`;
  return undefined;
}
