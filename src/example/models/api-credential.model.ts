import { AgentHidden, ParseClass } from 'nestjs-parse-agent';

/** Third-party secrets of each tenant: never visible to any agent. */
@ParseClass('ApiCredential')
@AgentHidden()
export class ApiCredential {}
