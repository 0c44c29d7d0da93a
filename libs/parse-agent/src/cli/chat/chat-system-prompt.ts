import { readFileSync } from 'node:fs';
import { CLI_ENV, CliUsageError } from '../cli-settings';

type Env = Record<string, string | undefined>;

/** The chat flags that shape the system prompt. */
export interface ChatPromptFlags {
  /** Replaces the default system prompt. */
  system?: string;
  /** Replaces it with a file's text. */
  systemFile?: string;
  /** Appended to the default, or to the replacement. */
  systemSuffix?: string;
}

/**
 * The chat's `systemPrompt` and `systemPromptSuffix`: flags win over LLM_SYSTEM_PROMPT and
 * LLM_SYSTEM_PROMPT_SUFFIX; neither set keeps the default prompt. Blank values count as unset.
 */
export function chatSystemPromptSettings(
  flags: ChatPromptFlags,
  env: Env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): { systemPrompt?: string; systemPromptSuffix?: string } {
  if (flags.system !== undefined && flags.systemFile !== undefined) {
    throw new CliUsageError('Give --system or --system-file, not both: each replaces the prompt.');
  }
  let systemPrompt = nonBlank(flags.system);
  if (flags.systemFile !== undefined) {
    let text: string;
    try {
      text = readFile(flags.systemFile);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new CliUsageError(
        `--system-file ${flags.systemFile}: cannot read it (${code ?? (error as Error).message}).`,
      );
    }
    systemPrompt = nonBlank(text);
    if (!systemPrompt) {
      throw new CliUsageError(
        `--system-file ${flags.systemFile} is empty; drop the flag to keep the default system prompt.`,
      );
    }
  }
  systemPrompt ??= nonBlank(env[CLI_ENV.systemPrompt]);
  const systemPromptSuffix =
    nonBlank(flags.systemSuffix) ?? nonBlank(env[CLI_ENV.systemPromptSuffix]);
  return {
    ...(systemPrompt ? { systemPrompt } : {}),
    ...(systemPromptSuffix ? { systemPromptSuffix } : {}),
  };
}

function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
