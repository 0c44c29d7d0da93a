import type { Command } from 'commander';
import { isLlmConfigured, NO_LLM_PROVIDER_MESSAGE } from '../../client/conversation-factory';
import { ParseAgentConversation } from '../../client/parse-agent-conversation';
import { PARSE_AGENT_VERSION } from '../../version';
import type { CliCommand } from '../cli-command';
import { CLI_ENV, positiveIntegerSetting } from '../cli-settings';
import { startAgentConsole } from '../console-repl';

/** `parse-agent console`: a JavaScript REPL bound to the agent. */
export const consoleCommand: CliCommand = (program, cli) => {
  const { env } = cli;
  program
    .command('console')
    .description(
      'a JavaScript REPL bound to the agent, with short helpers for tools, queries and prompts',
    )
    .addHelpText(
      'after',
      `
Helpers: help() tools() schemas() t(name, args) q(className, options) count(className, where)
schema(className) describe(className) table(result) dispatch(method, params) prompts()
renderPrompt(name, args), and with LLM_PROVIDER set ask(question) and reply(text).
A line's promise is awaited and its value printed. Every helper acts as this identity.

Examples:
  $ parse-agent console --username alice
  parse-agent> count('Order')
  parse-agent> q('Order', { limit: 3, keys: ['status', 'total'] })`,
    )
    .action(async (_options: unknown, command: Command) => {
      const settings = await cli.settingsOf(command, 'the console reads your input from it');
      await cli.withSession(settings, async (session) => {
        const conversation = isLlmConfigured(env)
          ? new ParseAgentConversation(session.agent, {
              env,
              user: session.principal.user,
              maxIterations: positiveIntegerSetting(env, CLI_ENV.maxIterations),
              autoCompactAt: positiveIntegerSetting(env, CLI_ENV.autoCompactAt),
            })
          : undefined;
        await startAgentConsole({
          agent: session.agent,
          dispatcher: session.dispatcher,
          input: cli.stdin,
          output: cli.stdout,
          conversation,
          noConversationReason: NO_LLM_PROVIDER_MESSAGE,
          header: [
            `parse-agent console ${PARSE_AGENT_VERSION}`,
            `Acting as ${session.principal.label} | permissions ${settings.permissions}${settings.tenantId ? ` | tenant ${settings.tenantId}` : ''} | ${session.agent.allowedTools().length} tools${conversation ? ` | model ${conversation.provider.name} / ${conversation.provider.model}` : ''}`,
          ],
        });
      });
    });
};
