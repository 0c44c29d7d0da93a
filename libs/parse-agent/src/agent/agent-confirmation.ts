import { AccessDeniedError } from '../core/errors';
import type { ElicitationChannel } from '../ports/elicitation-channel';
import type { ConfirmationRequest } from '../tools/tool-context';

/**
 * Asks the person to confirm a destructive call. Without a way to ask, refuses unless the
 * operator switched confirmation off (`confirmationRequired: false`); a decline or dismissal
 * always refuses.
 */
export async function confirmDestructiveCall(
  request: ConfirmationRequest,
  channel: ElicitationChannel | undefined,
  signal: AbortSignal,
  confirmationRequired: boolean,
): Promise<{ confirmed: boolean }> {
  const target = `${request.tool} on ${request.className}${request.objectId ? ` ${request.objectId}` : ''}`;
  if (!channel) {
    if (!confirmationRequired) return { confirmed: false };
    throw new AccessDeniedError(
      `${request.message.replace(/\?.*$/, '')}: this needs a person's confirmation, and this client cannot ask for it (it did not declare the MCP elicitation capability, or the call was not made over a streaming session). Use a client that supports elicitation; an operator can set confirmationRequired: false to run such calls without asking.`,
      { kind: 'confirmation_unavailable' },
    );
  }
  const answer = await channel.elicit(
    {
      message: request.message,
      requestedSchema: {
        type: 'object',
        properties: {
          confirm: {
            type: 'boolean',
            title: 'Confirm',
            description: `Allow ${target}`,
          },
        },
        required: ['confirm'],
      },
    },
    signal,
  );
  if (answer.action === 'accept' && answer.content?.confirm !== false) return { confirmed: true };
  throw new AccessDeniedError(
    `The person did not confirm: ${target} was not run (${answer.action === 'accept' ? 'declined' : answer.action}).`,
    { kind: 'confirmation_declined' },
  );
}
