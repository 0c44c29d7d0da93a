import type { AgentIdentity } from '../../core/agent-identity';
import { ParseRequestError } from '../../core/errors';
import type {
  DataFindQuery,
  DataOperation,
  DataPath,
  DataPathProvider,
  DataRow,
} from '../../ports/data-path';
import type { ParseAuth, ParseRestClient } from './parse-rest-client';

/** Parse REST bound to one identity: Parse Server enforces ACL, CLP and protectedFields itself. */
export class ParseRestDataPath implements DataPath {
  readonly kind = 'parse-rest';

  constructor(
    protected readonly client: ParseRestClient,
    protected readonly auth: ParseAuth,
  ) {}

  find(className: string, query: DataFindQuery, signal?: AbortSignal): Promise<DataRow[]> {
    return this.client.find(className, query, this.auth, signal);
  }

  get(
    className: string,
    objectId: string,
    query: Pick<DataFindQuery, 'keys' | 'include'>,
    signal?: AbortSignal,
  ): Promise<DataRow | undefined> {
    return this.client
      .get(className, objectId, query, this.auth, signal)
      .catch((error: unknown) => {
        // Parse answers 101 both for a missing object and for one the identity may not read.
        if (error instanceof ParseRequestError && error.parseCode === 101) return undefined;
        throw error;
      });
  }

  count(className: string, where: Record<string, unknown>, signal?: AbortSignal): Promise<number> {
    return this.client.count(className, where, this.auth, signal);
  }
}

/**
 * Serves session-token and master-key identities for reads. ACL-scoped identities (aclUser,
 * aclRole) are refused: Parse REST has no way to act as a user without their session.
 */
export class ParseRestDataPathProvider implements DataPathProvider {
  readonly kind = 'parse-rest';

  constructor(protected readonly client: ParseRestClient) {}

  refusal(operation: DataOperation, identity: AgentIdentity): string | undefined {
    if (identity.authType === 'acl_user' || identity.authType === 'acl_role') {
      return 'Parse REST cannot enforce an aclUser/aclRole scope';
    }
    if (operation === 'find' || operation === 'get' || operation === 'count') return undefined;
    return `Parse REST does not serve '${operation}' on this path`;
  }

  bind(identity: AgentIdentity): ParseRestDataPath {
    const auth: ParseAuth = identity.sessionToken
      ? { sessionToken: identity.sessionToken }
      : { masterKey: true };
    return new ParseRestDataPath(this.client, auth);
  }
}
