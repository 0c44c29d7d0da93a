import { AgentDescription, ParseClass } from 'nestjs-parse-agent';

/**
 * The model the existing-server suite loads with --models: a class whose class-level permissions
 * let nobody but the master key find it, so a user's query is refused by Parse Server itself.
 */
@ParseClass('ExistingServerLocked')
@AgentDescription('Rows only the master key may read.')
export class ExistingServerLocked {}
