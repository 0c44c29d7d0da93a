import type {
  ElicitationChannel,
  ElicitationRequest,
  ElicitationResult,
} from '../../ports/elicitation-channel';

/**
 * The console's answer to a tool's confirmation question (MCP elicitation). The first run asks:
 * the question is kept and the call is not confirmed (the tool refuses, nothing changes). The page
 * shows it; when the person agrees it runs again naming that question, and only that exact
 * question is accepted, so changed arguments ask again.
 */
export class ConsoleConfirmation implements ElicitationChannel {
  pending?: { message: string };

  constructor(protected readonly confirmedMessage: string | undefined) {}

  async elicit(request: ElicitationRequest): Promise<ElicitationResult> {
    if (this.confirmedMessage !== undefined && this.confirmedMessage === request.message)
      return { action: 'accept', content: { confirm: true } };
    this.pending = { message: request.message };
    return { action: 'cancel' };
  }
}
