import { staffRoleOf, tenantAcl } from '../seed/demo-dataset';

/** The slice of the Parse JS SDK that Parse Server hands to cloud code (`cloud: (Parse) => ...`). */
interface CloudParse {
  Cloud: {
    beforeSave(className: string, handler: (request: SaveRequest) => Promise<void>): void;
  };
  Error: new (code: number, message: string) => Error;
  ACL: new (json: Record<string, unknown>) => unknown;
  Query: new (className: string) => {
    equalTo(key: string, value: unknown): CloudQuery;
  };
}

interface CloudQuery {
  equalTo(key: string, value: unknown): CloudQuery;
  first(options: { useMasterKey: boolean }): Promise<unknown>;
}

interface CloudObject {
  get(key: string): unknown;
  getACL(): { toJSON(): unknown } | undefined;
  setACL(acl: unknown): void;
}

interface SaveRequest {
  master?: boolean;
  user?: unknown;
  object: CloudObject;
  original?: CloudObject;
}

/** Parse's code for an operation the server forbids. */
const OPERATION_FORBIDDEN = 119;

/** The demo classes a signed-in client may create or change through `/parse` (per their CLPs). */
export const TENANT_GUARDED_CLASSES = ['Customer', 'Order', 'SupportTicket'] as const;

const aclJson = (object: CloudObject | undefined) =>
  JSON.stringify(object?.getACL()?.toJSON() ?? null);

/**
 * Cloud code that keeps Parse's own tenancy intact under clients that may write: a row's tenantId
 * and ACL are set once and never changed by a client (so staff cannot hand a row to another tenant
 * or widen who reads it), and a client creates rows only in a tenant whose staff role lists them
 * directly, with that tenant's ACL whatever ACL it sent. The master key (the seeder, the operator)
 * is not limited. Registered by the embedded Parse Server; an existing deployment needs the same
 * triggers in its own cloud code (docs/security.md).
 */
export function registerTenantGuard(Parse: CloudParse): void {
  const forbidden = (message: string) => new Parse.Error(OPERATION_FORBIDDEN, message);
  for (const className of TENANT_GUARDED_CLASSES) {
    Parse.Cloud.beforeSave(className, async (request) => {
      if (request.master) return;
      const { object, original } = request;
      if (original) {
        if (object.get('tenantId') !== original.get('tenantId')) {
          throw forbidden(`${className}.tenantId cannot be changed: it names the row's tenant.`);
        }
        if (aclJson(object) !== aclJson(original)) {
          throw forbidden(`${className} ACLs are set by the server and cannot be changed.`);
        }
        return;
      }
      const tenant = object.get('tenantId');
      if (typeof tenant !== 'string' || !request.user) {
        throw forbidden(`A new ${className} needs the tenantId of a tenant you work for.`);
      }
      const member = await new Parse.Query('_Role')
        .equalTo('name', staffRoleOf(tenant))
        .equalTo('users', request.user)
        .first({ useMasterKey: true });
      if (!member) throw forbidden(`You are not staff of tenant '${tenant}'.`);
      object.setACL(new Parse.ACL(tenantAcl(tenant)));
    });
  }
}
