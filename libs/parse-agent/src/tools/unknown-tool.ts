import { UnknownToolError } from '../core/errors';
import { closestNames } from '../security/closest-names';

/** Tool names are at most 64 characters; longer input gets no suggestions (and is cut in the text). */
const MAX_TOOL_NAME = 64;

/**
 * The refusal of a tool name the registry does not have: says the tool is unknown and suggests
 * close names among `allowed` (the tools this agent may call, so a suggestion never reveals one it
 * may not), and where the full list is.
 */
export function unknownToolError(name: string, allowed: readonly string[]): UnknownToolError {
  const shown = name.length > MAX_TOOL_NAME ? `${name.slice(0, MAX_TOOL_NAME)}...` : name;
  const suggestions = name.length > MAX_TOOL_NAME ? [] : closestNames(name, allowed);
  const hint = suggestions.length ? ` Did you mean ${suggestions.join(', ')}?` : '';
  return new UnknownToolError(
    `Unknown tool '${shown}': no tool of that name is available to this agent.${hint} list_tools (tools/list over MCP) names the tools it may call.`,
    shown,
    suggestions,
  );
}
