import { ParseAgent } from '../agent/parse-agent';
import { ParseAgentConfigError } from '../core/errors';
import { PARSE_CONVENTIONS } from '../mcp/parse-conventions';
import { classesInstruction } from '../mcp/server-instructions';
import type { ConversationAgent, ConversationUser } from '../ports/conversation';

/** The options that decide a conversation's system prompt. */
export interface SystemPromptOptions {
  systemPrompt?: string;
  systemPromptSuffix?: string;
  user?: ConversationUser;
}

/** Longest identity value quoted into the prompt; longer ones are cut (they are labels, not data). */
const MAX_LABEL = 80;

/**
 * The system prompt a conversation sends: `systemPrompt` when given (it replaces the default; ''
 * sends none), else the default built from the agent; `systemPromptSuffix` is appended to
 * whichever of the two applies. Built once per conversation.
 */
export function conversationSystemPrompt(
  agent: ConversationAgent,
  options: SystemPromptOptions = {},
): string {
  validateSystemPromptOptions(options);
  const { systemPrompt, systemPromptSuffix } = options;
  const base = systemPrompt ?? defaultSystemPrompt(agent, options.user);
  const suffix = systemPromptSuffix?.trim();
  if (!suffix) return base;
  return base ? `${base}\n\n${suffix}` : suffix;
}

/** Throws a config error naming the option when a prompt option or the user has the wrong type. */
export function validateSystemPromptOptions(options: SystemPromptOptions): void {
  const { systemPrompt, systemPromptSuffix, user } = options;
  for (const [name, value] of Object.entries({ systemPrompt, systemPromptSuffix })) {
    if (value !== undefined && typeof value !== 'string') {
      throw new ParseAgentConfigError(
        `${name} must be a string, got ${typeof value}. Leave it unset to use the default system prompt.`,
      );
    }
  }
  if (user === undefined) return;
  // Only objectId and username are read, so a whole Parse user row (sessionToken included) may be
  // passed: nothing else reaches the prompt.
  const ok =
    typeof user === 'object' &&
    user !== null &&
    [user.objectId, user.username].every((v) => v === undefined || typeof v === 'string');
  if (!ok) {
    throw new ParseAgentConfigError(
      'user must be { objectId?: string, username?: string }: who the session belongs to, as your app verified it.',
    );
  }
}

/**
 * The default system prompt: what the assistant is for, whom it acts for, what data it can reach
 * (the same facts as the MCP server instructions, naming only tools this agent may call), how to
 * answer, and the Parse conventions. Never includes a credential: the session token is not
 * mentioned, only who the user is when the caller said so. An agent that is not a ParseAgent gets
 * the parts that do not depend on an identity.
 */
export function defaultSystemPrompt(agent: ConversationAgent, user?: ConversationUser): string {
  const tools = agent.toolDefinitions({ format: 'mcp' }) as Array<{
    name: string;
    permission?: string;
  }>;
  const names = new Set(tools.map((t) => t.name));
  const sections = [
    'You answer questions about the data of a Parse Server application (classes of objects, queried with Parse constraints) by calling the tools you are given.',
  ];
  if (agent instanceof ParseAgent) {
    const writers = tools.filter((t) => t.permission && t.permission !== 'readonly');
    sections.push(
      identitySection(
        agent,
        user,
        writers.map((t) => t.name),
      ),
    );
    const classes = classesInstruction(agent, names);
    if (classes) sections.push(`What you can reach\n${item(classes)}`);
  }
  sections.push(answeringSection(names));
  sections.push(PARSE_CONVENTIONS);
  return sections.join('\n\n');
}

function identitySection(
  agent: ParseAgent,
  user: ConversationUser | undefined,
  writeTools: string[],
): string {
  const lines = ['Whom you act for'];
  const who = userLabel(user, agent.aclUser);
  switch (agent.authType) {
    case 'master_key':
      lines.push(
        'You act for the operator of the application, with its master key: ACLs and class-level permissions do not limit your reads, so results can include any user’s rows. Share only what the question needs.',
      );
      break;
    case 'session_token':
      lines.push(
        `You act for ${who ?? 'one signed-in Parse user'}, through their own session. Parse Server applies that user’s row ACLs, class-level permissions and protected fields to every call: data a tool does not return is data this user may not see.`,
      );
      break;
    case 'acl_user':
      lines.push(
        `You act for ${who ?? 'one Parse user'}: every read is limited to rows whose ACL lets that user (or one of their roles) read them.`,
      );
      break;
    case 'acl_role':
      lines.push(
        `You act for members of the Parse role ${quote(agent.aclRole ?? '')}: every read is limited to rows whose ACL lets that role read them.`,
      );
      break;
    default:
      lines.push(`You act for ${agent.authType}.`);
  }
  lines.push(
    writeTools.length
      ? `Permission tier: ${agent.permissions}. Tools that change data: ${writeTools.join(', ')}. Change data only when the person asked for that change, and say what you changed.`
      : `Permission tier: ${agent.permissions}. You can read data but not change it.`,
  );
  if (agent.tenantId) {
    lines.push(
      `Tenant: ${quote(agent.tenantId)}. Tenant-scoped classes return only this tenant’s rows; other tenants are out of reach, so do not try to reach them.`,
    );
  }
  lines.push(
    'You never see credentials (session tokens, keys, passwords); do not ask for them. A refusal (access denied, a withheld field, a class you cannot read) is this policy at work: report it, never look for a way around it.',
  );
  return lines.map((line, index) => (index ? item(line) : line)).join('\n');
}

function answeringSection(tools: ReadonlySet<string>): string {
  const lines = [
    'How to answer',
    'Answer from tool results only; never invent objects, counts or field values. When the tools cannot answer, say so and why.',
  ];
  const summaries: string[] = [];
  if (tools.has('count_objects')) summaries.push('count_objects for "how many"');
  if (tools.has('group_by')) summaries.push('group_by for "how many per ..."');
  if (tools.has('group_by_date')) summaries.push('group_by_date for counts per day, week or month');
  if (summaries.length) {
    lines.push(
      `Count with tools, not by reading rows: ${summaries.join('; ')}. A page of rows is not a total.`,
    );
  }
  lines.push(
    'Constraints in where follow Parse’s query syntax: {"status":"paid"} is equality; operators include $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $all, $exists and $regex; $or takes a list of constraints.',
  );
  return lines.map((line, index) => (index ? item(line) : line)).join('\n');
}

/** "the Parse user "alice" (objectId Ab3dE6gH9j)", or undefined when nothing is known. */
function userLabel(user: ConversationUser | undefined, aclUser?: string): string | undefined {
  const username = typeof user?.username === 'string' && user.username ? user.username : undefined;
  // An aclUser agent's own id wins over what the caller said.
  const objectId =
    aclUser ?? (typeof user?.objectId === 'string' && user.objectId ? user.objectId : undefined);
  if (!username && !objectId) return undefined;
  const parts = [username ? `the Parse user ${quote(username)}` : 'the Parse user'];
  if (objectId) parts.push(`(objectId ${quote(objectId)})`);
  return parts.join(' ');
}

/**
 * A value as a JSON string, cut to MAX_LABEL: a username is user-written text, so it is quoted on
 * one line and cannot pass for an instruction of its own.
 */
function quote(value: string): string {
  const clipped = value.length > MAX_LABEL ? `${value.slice(0, MAX_LABEL)}…` : value;
  return JSON.stringify(clipped);
}

function item(line: string): string {
  return `- ${line}`;
}
