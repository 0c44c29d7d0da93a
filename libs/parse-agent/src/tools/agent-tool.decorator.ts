import { ParseAgentConfigError } from '../core/errors';
import type { ToolRegistration } from './custom-tool';
import { METADATA } from '../metadata/metadata.constants';
import type { DtoClass } from '../validation/dto';

/**
 * Everything ToolRegistry.register takes, except the handler: the decorated method is the handler.
 * `inputSchema` may also be a class-validator DTO class: clients see its derived JSON Schema, and
 * the method receives the validated DTO instance.
 */
export type AgentToolOptions = Omit<ToolRegistration, 'handler' | 'inputSchema'> & {
  inputSchema?: ToolRegistration['inputSchema'] | DtoClass;
};

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Registers a method of a Nest provider as an agent tool. The method receives `(args, context)`
 * like any tool handler; it is found at application bootstrap in modules that import
 * ParseAgentModule, and registered with the module's ToolRegistry.
 */
export function AgentTool(options: AgentToolOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const where = `@AgentTool on ${target.constructor?.name ?? 'a provider'}.${String(propertyKey)}`;
    if (!options || typeof options.name !== 'string' || !TOOL_NAME.test(options.name)) {
      throw new ParseAgentConfigError(
        `${where}: name must be lowercase letters, digits and underscores (max 64).`,
      );
    }
    if (typeof options.description !== 'string' || !options.description.trim()) {
      throw new ParseAgentConfigError(
        `${where}: a description is required (agents choose tools by it).`,
      );
    }
    if (typeof descriptor?.value !== 'function') {
      throw new ParseAgentConfigError(`${where}: decorate a method.`);
    }
    Reflect.defineMetadata(METADATA.tool, { ...options }, descriptor.value as object);
    return descriptor;
  };
}

export function agentToolOptionsOf(method: unknown): AgentToolOptions | undefined {
  return typeof method === 'function'
    ? (Reflect.getMetadata(METADATA.tool, method) as AgentToolOptions | undefined)
    : undefined;
}
