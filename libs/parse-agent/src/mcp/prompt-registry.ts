import { Subject, type Observable } from 'rxjs';
import { isolateSubscribers, reportToStderr } from '../core/isolated-observable';
import { AgentValidationError, ParseAgentConfigError } from '../core/errors';
import type { ParseAgent } from '../agent/parse-agent';
import { isPlainObject } from '../core/plain-object';
import { requireArg, type PromptArgs } from './prompt-arguments';

export interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

/** What `prompts/list` shows for one prompt. */
export interface PromptDescriptor {
  name: string;
  description: string;
  arguments: PromptArgument[];
}

/** A renderer returns the message text, or the text plus a description for this rendering. */
export type PromptRenderResult = string | { description: string; text: string };

export type PromptRenderer = (
  args: PromptArgs,
  agent: ParseAgent,
) => PromptRenderResult | Promise<PromptRenderResult>;

/** What the application passes to `PromptRegistry.register()`. */
export interface PromptRegistration {
  name: string;
  description: string;
  /** Declared arguments; `required: true` ones are checked before the renderer runs. */
  arguments?: Array<{ name: string; description?: string; required?: boolean }>;
  render: PromptRenderer;
}

export interface PromptMessage {
  role: 'user';
  content: { type: 'text'; text: string };
}

/** A rendered prompt, in the shape `prompts/get` returns. */
export interface RenderedPrompt {
  description: string;
  messages: PromptMessage[];
}

export interface PromptRegistryChange {
  type: 'registered' | 'unregistered' | 'reset';
  name?: string;
}

interface StoredPrompt extends PromptDescriptor {
  render: PromptRenderer;
}

/**
 * Named prompt templates served over MCP: the built-ins given to the constructor plus the
 * application's own. Registering a built-in's name overrides it in place; `unregister` or
 * `reset()` brings the built-in back. Every change is announced on `changes$`, which the MCP
 * transport turns into `notifications/prompts/list_changed`.
 */
export class PromptRegistry {
  protected readonly builtins = new Map<string, StoredPrompt>();
  protected readonly custom = new Map<string, StoredPrompt>();
  protected readonly changeSubject = new Subject<PromptRegistryChange>();
  /** A subscriber that throws is reported (options.warn, else stderr), never fatal. */
  readonly changes$: Observable<PromptRegistryChange>;

  constructor(
    builtins: readonly PromptRegistration[] = [],
    options: { warn?: (message: string) => void } = {},
  ) {
    this.changes$ = isolateSubscribers(
      this.changeSubject,
      'PromptRegistry.changes$',
      options.warn ?? reportToStderr,
    );
    for (const prompt of builtins) {
      const stored = this.compile(prompt);
      this.builtins.set(stored.name, stored);
    }
  }

  register(registration: PromptRegistration): PromptDescriptor {
    const stored = this.compile(registration);
    this.custom.set(stored.name, stored);
    this.changeSubject.next({ type: 'registered', name: stored.name });
    return describe(stored);
  }

  /** Removes an application prompt (a built-in it overrode comes back). */
  unregister(name: string): boolean {
    const removed = this.custom.delete(name);
    if (removed) this.changeSubject.next({ type: 'unregistered', name });
    return removed;
  }

  /** Removes every application prompt; the built-ins stay. */
  reset(): void {
    this.custom.clear();
    this.changeSubject.next({ type: 'reset' });
  }

  has(name: string): boolean {
    return this.custom.has(name) || this.builtins.has(name);
  }

  /** Built-ins in their order (overrides keep the built-in's place), then application prompts. */
  list(): PromptDescriptor[] {
    const out: PromptDescriptor[] = [];
    for (const [name, builtin] of this.builtins)
      out.push(describe(this.custom.get(name) ?? builtin));
    for (const [name, prompt] of this.custom)
      if (!this.builtins.has(name)) out.push(describe(prompt));
    return out;
  }

  /**
   * Renders a prompt for an agent. Unknown names, missing required arguments and non-string
   * argument values throw `AgentValidationError` (the MCP layer answers -32602 with its message).
   */
  async render(name: string, args: unknown, agent: ParseAgent): Promise<RenderedPrompt> {
    const prompt =
      typeof name === 'string' ? (this.custom.get(name) ?? this.builtins.get(name)) : undefined;
    if (!prompt) throw new AgentValidationError(`Unknown prompt: ${String(name)}`);
    const normalized = normalizeArgs(args);
    for (const argument of prompt.arguments) {
      if (argument.required) requireArg(normalized, argument.name);
    }
    const output = await prompt.render(normalized, agent);
    let description: string;
    let text: string;
    if (typeof output === 'string') {
      description = `Parse analytics prompt: ${prompt.name}`;
      text = output;
    } else if (isPlainObject(output) && 'text' in output && 'description' in output) {
      description = String(output.description);
      text = String(output.text);
    } else {
      throw new ParseAgentConfigError(
        `Prompt '${prompt.name}' renderer must return a string or { description, text }.`,
      );
    }
    return { description, messages: [{ role: 'user', content: { type: 'text', text } }] };
  }

  protected compile(registration: PromptRegistration): StoredPrompt {
    if (!isPlainObject(registration)) {
      throw new ParseAgentConfigError('register() takes { name, description, arguments, render }.');
    }
    const { name, description, render } = registration;
    if (typeof name !== 'string' || !name.trim() || name.length > 128) {
      throw new ParseAgentConfigError(
        `Prompt name ${JSON.stringify(name)} is invalid: use a non-empty string of at most 128 characters.`,
      );
    }
    if (typeof description !== 'string' || !description.trim()) {
      throw new ParseAgentConfigError(
        `Prompt '${name}' needs a description: clients show it when users pick prompts.`,
      );
    }
    if (typeof render !== 'function') {
      throw new ParseAgentConfigError(
        `Prompt '${name}' needs a render(args, agent) function returning the prompt text.`,
      );
    }
    const declared = registration.arguments ?? [];
    if (!Array.isArray(declared)) {
      throw new ParseAgentConfigError(
        `Prompt '${name}': arguments must be an array of { name, description, required }.`,
      );
    }
    const seen = new Set<string>();
    const args = declared.map((argument): PromptArgument => {
      if (!isPlainObject(argument) || typeof argument.name !== 'string' || !argument.name) {
        throw new ParseAgentConfigError(
          `Prompt '${name}': every argument needs a non-empty string name.`,
        );
      }
      if (seen.has(argument.name)) {
        throw new ParseAgentConfigError(
          `Prompt '${name}' declares argument '${argument.name}' twice.`,
        );
      }
      seen.add(argument.name);
      if (argument.description !== undefined && typeof argument.description !== 'string') {
        throw new ParseAgentConfigError(
          `Prompt '${name}': the description of argument '${argument.name}' must be a string.`,
        );
      }
      if (argument.required !== undefined && typeof argument.required !== 'boolean') {
        throw new ParseAgentConfigError(
          `Prompt '${name}': 'required' of argument '${argument.name}' must be true or false.`,
        );
      }
      return {
        name: argument.name,
        description: argument.description ?? '',
        required: argument.required ?? false,
      };
    });
    return { name, description, arguments: args, render };
  }
}

function describe(prompt: StoredPrompt): PromptDescriptor {
  return {
    name: prompt.name,
    description: prompt.description,
    arguments: prompt.arguments.map((a) => ({ ...a })),
  };
}

/** MCP prompt arguments are strings; numbers and booleans are accepted as their text. */
function normalizeArgs(args: unknown): PromptArgs {
  if (args === undefined || args === null) return {};
  if (!isPlainObject(args)) {
    throw new AgentValidationError('Invalid params: prompt arguments must be an object');
  }
  const out = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') out[key] = String(value);
    else throw new AgentValidationError(`${key} must be a string`);
  }
  return out;
}
