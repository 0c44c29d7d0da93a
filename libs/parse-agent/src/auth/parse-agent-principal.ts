import { printAs, shownSecret } from '../core/secret-display';

/** A caller authenticated with a Parse session token. */
export interface ParseAgentUserPrincipal {
  readonly kind: 'user';
  /** The Parse user's objectId. */
  readonly userId: string;
  readonly username: string;
  /** The bearer token the user presented (Parse enforces their ACLs through it). */
  readonly sessionToken: string;
  /** The tenant from the module's `auth.tenant` source; never from a field the user can write. */
  readonly tenantId?: string;
  /** Why the user has no tenant, when they have none (shown in logs, never to the client). */
  readonly noTenantReason?: string;
}

/** The operator, authenticated with the operator key (`auth.apiKey`). */
export interface ParseAgentOperatorPrincipal {
  readonly kind: 'operator';
}

/**
 * Who a request acts for, as the shipped guards established it. Read it with `principalOf(request)`
 * in an agentFactory or a controller.
 */
export type ParseAgentPrincipal = ParseAgentUserPrincipal | ParseAgentOperatorPrincipal;

/** The request property the shipped guards set. */
export const PRINCIPAL_PROPERTY = 'parseAgentPrincipal';

/** A request the shipped guards have seen. */
export interface RequestWithPrincipal {
  [PRINCIPAL_PROPERTY]?: ParseAgentPrincipal;
}

/** The principal the shipped guards put on the request, or undefined when none ran or accepted. */
export function principalOf(request: unknown): ParseAgentPrincipal | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  return (request as RequestWithPrincipal)[PRINCIPAL_PROPERTY];
}

/**
 * Puts the principal on the request (not enumerable, so it is not serialised with the request).
 * A user's principal prints its session token as a fingerprint (console.log, util.inspect,
 * JSON.stringify); reading `principal.sessionToken` still gives the token.
 */
export function setPrincipal(request: object, principal: ParseAgentPrincipal): void {
  const copy = { ...principal };
  if (copy.kind === 'user') {
    printAs(copy, 'ParseAgentUserPrincipal', () => ({
      ...copy,
      sessionToken: shownSecret(copy.sessionToken),
    }));
  }
  Object.defineProperty(request, PRINCIPAL_PROPERTY, {
    value: Object.freeze(copy),
    enumerable: false,
    configurable: true,
    writable: false,
  });
}
