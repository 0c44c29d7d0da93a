import { AgentDescription, AgentField, AgentFields, ParseClass } from 'nestjs-parse-agent';

@ParseClass('_User')
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
