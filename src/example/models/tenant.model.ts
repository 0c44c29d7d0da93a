import { AgentDescription, AgentFields, AgentVisible, ParseClass } from 'nestjs-parse-agent';

@ParseClass('Tenant')
@AgentVisible()
@AgentDescription('The companies using the platform; every tenant-scoped row names one by slug.')
@AgentFields('slug', 'name', 'plan')
export class Tenant {}
