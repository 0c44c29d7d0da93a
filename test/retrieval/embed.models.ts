import { AgentSearchable, AgentVisible, ParseClass } from 'nestjs-parse-agent';

/**
 * The model the `embed` suite loads with --models (a child process requires this file by path);
 * the class name comes from the suite, so runs never share rows.
 */
@ParseClass(process.env.EMBED_TEST_CLASS ?? 'EmbedNote')
@AgentVisible()
@AgentSearchable({ fields: ['text'], chunk: { size: 120, overlap: 20, maxPerDocument: 4 } })
export class EmbedNote {}
