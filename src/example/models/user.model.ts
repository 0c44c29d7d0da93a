import {
  AgentDescription,
  AgentField,
  AgentFields,
  AgentTenantShared,
  ParseClass,
} from 'nestjs-parse-agent';

// Not scoped by tenantId on purpose: users edit that field themselves, so it cannot decide access.
// Each staff row's ACL (its own tenant's staff and the admins) does, here and on /parse alike.
@ParseClass('_User')
@AgentTenantShared()
@AgentDescription('Accounts of staff using the platform.')
@AgentFields('username', 'fullName', 'tenantId')
export class User {
  // Every user may edit their own _User row, so this value is whatever they typed: it decides no
  // access (the tenant role does) and the description says so to the model reading it.
  @AgentField({
    description:
      'Display only, editable by the user: not their verified tenant (that is their tenant role).',
  })
  tenantId!: string;
}
