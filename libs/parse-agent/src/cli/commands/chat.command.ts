import type { Command } from 'commander';
import { isLlmConfigured } from '../../client/conversation-factory';
import { ParseAgentConversation } from '../../client/parse-agent-conversation';
import { isTruthyEnv } from '../../tools/env-gates';
import { chatErrorMessage } from '../chat/chat-errors';
import { runChatLoop } from '../chat/chat-loop';
import { chatSystemPromptSettings, type ChatPromptFlags } from '../chat/chat-system-prompt';
import type { CliCommand } from '../cli-command';
import { CLI_ENV, CliUsageError, positiveIntegerSetting } from '../cli-settings';
import { LLM_ENV, LLM_PROVIDER_NAMES } from '../../client/provider-from-env';

/** What a CLI user does when no model is configured (the library's message speaks of forRoot). */
const NO_MODEL_FOR_CHAT =
  `chat needs a language model. Set ${LLM_ENV.provider} (one of: ${LLM_PROVIDER_NAMES.join(', ')}) and ${LLM_ENV.apiKey} ` +
  `in the environment or .env, and optionally ${LLM_ENV.model} and ${LLM_ENV.baseURL} (a local server such as ollama needs no key). ` +
  `For example: ${LLM_ENV.provider}=openai ${LLM_ENV.apiKey}=sk-... parse-agent chat. ` +
  'Without a model, `parse-agent console` and `parse-agent call` reach the same tools.';

/** `parse-agent chat`: a terminal conversation with a language model over the agent's tools. */
export const chatCommand: CliCommand = (program, cli) => {
  const { env, stdout } = cli;
  program
    .command('chat')
    .description('a terminal conversation with a language model that answers with your data')
    .option('--trace', `show tool calls and timings (${CLI_ENV.chatTrace}=true)`)
    .option(
      '--system <prompt>',
      `replace the default system prompt (${CLI_ENV.systemPrompt}); /system shows the one in use`,
    )
    .option('--system-file <path>', 'replace the default system prompt with this file’s text')
    .option(
      '--system-suffix <text>',
      `append to the system prompt, default or replaced (${CLI_ENV.systemPromptSuffix})`,
    )
    .addHelpText(
      'after',
      `
Needs LLM_PROVIDER (openai, anthropic, openai-compatible, lmstudio, ollama, vllm, deepseek),
LLM_API_KEY, and optionally LLM_MODEL, LLM_BASE_URL, LLM_MAX_ITERATIONS, LLM_AUTO_COMPACT_AT,
LLM_SYSTEM_PROMPT, LLM_SYSTEM_PROMPT_SUFFIX. The default system prompt tells the model whom it
acts for (never the session token), what it can reach and the Parse conventions.
Slash commands: /tools /usage /compact /reset /trace /history /system /help /quit

Example:
  $ LLM_PROVIDER=openai LLM_API_KEY=sk-... parse-agent chat --username alice`,
    )
    .action(async (options: { trace?: boolean } & ChatPromptFlags, command: Command) => {
      const settings = await cli.settingsOf(command, 'chat reads your questions from it');
      if (!isLlmConfigured(env)) throw new CliUsageError(NO_MODEL_FOR_CHAT);
      const prompt = chatSystemPromptSettings(options, env);
      await cli.withSession(settings, async (session) => {
        const conversation = new ParseAgentConversation(session.agent, {
          env,
          ...prompt,
          user: session.principal.user,
          maxIterations: positiveIntegerSetting(env, CLI_ENV.maxIterations),
          autoCompactAt: positiveIntegerSetting(env, CLI_ENV.autoCompactAt),
        });
        const trace = Boolean(options.trace) || isTruthyEnv(env[CLI_ENV.chatTrace]);
        await runChatLoop({
          agent: session.agent,
          conversation,
          input: cli.stdin,
          output: stdout,
          trace,
          describeError: (error) => chatErrorMessage(error, env),
          header: [
            `parse-agent chat — ${conversation.provider.name} / ${conversation.provider.model}`,
            `Acting as ${session.principal.label} | permissions ${settings.permissions}${settings.tenantId ? ` | tenant ${settings.tenantId}` : ''} | trace ${trace ? 'on' : 'off'}`,
            'Ask a question. Commands: /tools /usage /compact /reset /trace /history /system /help /quit',
          ],
        });
      });
    });
};
