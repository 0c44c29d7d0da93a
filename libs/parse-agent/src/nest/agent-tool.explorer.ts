import {
  ForbiddenException,
  Injectable,
  Logger,
  UnauthorizedException,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { ExternalContextCreator } from '@nestjs/core/helpers/external-context-creator';
import { AccessDeniedError } from '../core/errors';
import { agentToolOptionsOf } from '../tools/agent-tool.decorator';
import type { ToolContext } from '../tools/tool-context';
import { ToolRegistry } from '../tools/tool-registry';

/** `ExecutionContext.getType()` inside guards and interceptors of @AgentTool methods. */
export const AGENT_TOOL_CONTEXT_TYPE = 'parse-agent-tool';

/**
 * Finds @AgentTool methods on the application's providers once, at bootstrap, and registers them.
 * Each runs through Nest's external context, so `@UseGuards` and `@UseInterceptors` on the method
 * apply (their ExecutionContext args are `[args, toolContext]`); a guard refusal is `access_denied`.
 * A name already taken (by a built-in or another provider) is reported and skipped.
 */
@Injectable()
export class AgentToolExplorer implements OnApplicationBootstrap {
  protected readonly logger = new Logger('ParseAgentTools');

  constructor(
    protected readonly discovery: DiscoveryService,
    protected readonly scanner: MetadataScanner,
    protected readonly tools: ToolRegistry,
    protected readonly contextCreator: ExternalContextCreator,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const options = agentToolOptionsOf(instance[methodName]);
        if (!options) continue;
        if (this.tools.get(options.name)) {
          this.logger.warn(
            `@AgentTool '${options.name}' on ${instance.constructor.name}.${methodName} is skipped: a tool with that name is already registered.`,
          );
          continue;
        }
        this.tools.register({
          ...options,
          handler: this.handlerFor(instance, methodName, options.name),
        });
      }
    }
  }

  protected handlerFor(instance: Record<string, unknown>, methodName: string, toolName: string) {
    const run = this.contextCreator.create(
      instance,
      instance[methodName] as (...args: unknown[]) => unknown,
      methodName,
      undefined,
      undefined,
      undefined,
      undefined,
      { guards: true, interceptors: true, filters: false },
      AGENT_TOOL_CONTEXT_TYPE,
    );
    return async (args: unknown, context: ToolContext): Promise<unknown> => {
      try {
        return (await run(args, context)) as unknown;
      } catch (error) {
        if (error instanceof ForbiddenException || error instanceof UnauthorizedException) {
          throw new AccessDeniedError(`Tool '${toolName}' was refused by its guard.`);
        }
        throw error;
      }
    };
  }
}
