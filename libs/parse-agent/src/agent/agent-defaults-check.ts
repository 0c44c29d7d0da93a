import { ParseAgentError } from '../core/errors';
import { toolProfileNames } from '../tools/tool-profiles';
import type { AgentOwnOptions } from './agent-options';
import { resolveApprovalOption } from './agent-approval';
import { resolvePromptCanaries } from './prompt-canaries';

/**
 * Problems with agent options given as module defaults (`forRoot({ defaults })`), found at boot
 * rather than on the first request: each names the option as `defaults.<name>`. Only the options
 * whose values are names from a fixed set are checked here; the rest are checked when an agent
 * is created, as for any agent.
 */
export function agentDefaultsProblems(defaults: Partial<AgentOwnOptions>): string[] {
  const problems: string[] = [];
  const check = (run: () => void) => {
    try {
      run();
    } catch (error) {
      if (error instanceof ParseAgentError) problems.push(error.message);
      else throw error;
    }
  };
  if (typeof defaults.tools === 'string') {
    const profile = defaults.tools;
    check(() => toolProfileNames(profile, 'defaults.tools'));
  }
  if (defaults.confirm !== undefined) {
    check(() => resolveApprovalOption(defaults.confirm, undefined, 'defaults.confirm'));
  }
  if (defaults.promptCanaries !== undefined) {
    check(() =>
      resolvePromptCanaries(defaults.promptCanaries, undefined, 'defaults.promptCanaries'),
    );
  }
  if (defaults.sourceProvenance !== undefined && typeof defaults.sourceProvenance !== 'boolean')
    problems.push('defaults.sourceProvenance must be true or false.');
  return problems;
}
