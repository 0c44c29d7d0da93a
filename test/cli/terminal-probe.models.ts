import { AgentDescription, ParseClass } from 'nestjs-parse-agent';

/**
 * The model the terminal-escape suite loads with --models (a child process requires this file by
 * path): one visible class whose rows hold escape sequences.
 */
@ParseClass('TerminalProbe')
@AgentDescription('Rows whose text tries to drive the terminal.')
export class TerminalProbe {}
