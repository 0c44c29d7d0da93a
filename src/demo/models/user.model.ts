import { AgentDescription, AgentFields, ParseClass } from 'nestjs-parse-agent';

@ParseClass('_User')
@AgentDescription('Accounts of staff using the platform.')
@AgentFields('username', 'fullName', 'tenantId')
export class User {}
