import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { agentToolOptionsOf } from '../metadata/decorators/agent-tool.decorator';
import type { ToolContext } from '../tools/tool-context';
import { ToolRegistry } from '../tools/tool-registry';

/**
 * Finds @AgentTool methods on the application's providers once, at bootstrap, and registers them.
 * A name already taken (by a built-in or another provider) is reported and skipped.
 */
@Injectable()
export class AgentToolExplorer implements OnApplicationBootstrap {
  protected readonly logger = new Logger('ParseAgentTools');

  constructor(
    protected readonly discovery: DiscoveryService,
    protected readonly scanner: MetadataScanner,
    protected readonly tools: ToolRegistry,
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
        const method = instance[methodName] as (args: unknown, context: ToolContext) => unknown;
        this.tools.register({
          ...options,
          handler: (args, context) => method.call(instance, args, context),
        });
      }
    }
  }
}
