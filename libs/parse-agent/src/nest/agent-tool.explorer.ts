import {
  ForbiddenException,
  Injectable,
  Logger,
  UnauthorizedException,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import { ExternalContextCreator } from '@nestjs/core/helpers/external-context-creator';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import type { Module as NestModule } from '@nestjs/core/injector/module';
import { AccessDeniedError } from '../core/errors';
import { agentToolOptionsOf } from '../tools/agent-tool.decorator';
import type { PolicedToolContext, ToolRegistration } from '../tools/custom-tool';
import type { ToolContext } from '../tools/tool-context';
import { ToolRegistry } from '../tools/tool-registry';
import { isParseAgentLibraryModule } from './parse-agent-library.marker';
import { dtoJsonSchema, isDtoClass, validateDto, type DtoClass } from '../validation/dto';

/** `ExecutionContext.getType()` inside guards and interceptors of @AgentTool methods. */
export const AGENT_TOOL_CONTEXT_TYPE = 'parse-agent-tool';

/**
 * Finds @AgentTool methods once, at bootstrap, on the providers of the modules that import
 * ParseAgentModule (forRoot or forFeature), and registers them. Each runs through Nest's external
 * context, so `@UseGuards` and `@UseInterceptors` on the method apply (their ExecutionContext args
 * are `[args, toolContext]`); a guard refusal is `access_denied`. A provider that cannot be a tool
 * (its module does not import the library, it is request-scoped, or its name is taken) is skipped
 * with a warning that says how to fix it.
 */
@Injectable()
export class AgentToolExplorer implements OnApplicationBootstrap {
  protected readonly logger = new Logger('ParseAgentTools');

  constructor(
    protected readonly modules: ModulesContainer,
    protected readonly scanner: MetadataScanner,
    protected readonly tools: ToolRegistry,
    protected readonly contextCreator: ExternalContextCreator,
  ) {}

  onApplicationBootstrap(): void {
    for (const module of this.modules.values()) {
      if (isParseAgentLibraryModule(module.metatype)) continue;
      const importsLibrary = importsTheLibrary(module);
      for (const wrapper of module.providers.values()) {
        this.explore(wrapper, module, importsLibrary);
      }
    }
  }

  protected explore(wrapper: InstanceWrapper, module: NestModule, importsLibrary: boolean): void {
    const prototype = (wrapper.metatype as { prototype?: object } | null)?.prototype;
    if (!prototype || typeof wrapper.metatype !== 'function') return;
    const decorated = this.scanner
      .getAllMethodNames(prototype)
      .map((methodName) => ({
        methodName,
        options: agentToolOptionsOf((prototype as Record<string, unknown>)[methodName]),
      }))
      .filter((m) => m.options);
    if (!decorated.length) return;
    const where = (methodName: string) => `${wrapper.name?.toString() ?? 'provider'}.${methodName}`;
    if (!importsLibrary) {
      for (const { methodName, options } of decorated) {
        this.logger.warn(
          `@AgentTool '${options!.name}' on ${where(methodName)} is skipped: its module ${module.name} does not import ParseAgentModule. Add ParseAgentModule.forFeature([]) (or your models) to that module's imports.`,
        );
      }
      return;
    }
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!wrapper.isDependencyTreeStatic() || !instance) {
      for (const { methodName, options } of decorated) {
        this.logger.warn(
          `@AgentTool '${options!.name}' on ${where(methodName)} is skipped: the provider is request-scoped (or depends on one), and tools are registered once at bootstrap. Make it a singleton, or move the method to a singleton provider and read per-call data from the ToolContext.`,
        );
      }
      return;
    }
    for (const { methodName, options } of decorated) {
      if (this.tools.get(options!.name)) {
        this.logger.warn(
          `@AgentTool '${options!.name}' on ${where(methodName)} is skipped: a tool with that name is already registered. Rename one of them.`,
        );
        continue;
      }
      // A DTO's JSON Schema is derived once, here; each call is validated with the class.
      const dto = isDtoClass(options!.inputSchema) ? options!.inputSchema : undefined;
      // The registry gives the method the policed view unless the options say access: 'master'.
      this.tools.register({
        ...options!,
        inputSchema: dto ? dtoJsonSchema(dto) : (options!.inputSchema as Record<string, unknown>),
        handler: this.handlerFor(instance, methodName, options!.name, dto),
      } as ToolRegistration<unknown>);
    }
  }

  protected handlerFor(
    instance: Record<string, unknown>,
    methodName: string,
    toolName: string,
    dto?: DtoClass,
  ) {
    const method = instance[methodName] as (...args: unknown[]) => unknown;
    const run = this.contextCreator.create(
      instance,
      dto ? validatingMethod(method, dto, toolName) : method,
      methodName,
      undefined,
      undefined,
      undefined,
      undefined,
      { guards: true, interceptors: true, filters: false },
      AGENT_TOOL_CONTEXT_TYPE,
    );
    return async (args: unknown, context: ToolContext | PolicedToolContext): Promise<unknown> => {
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

/**
 * The method, receiving its arguments validated into the DTO. Runs after the guards (as a Nest pipe
 * would), so a refused caller learns nothing about the arguments; the method's metadata (guards,
 * interceptors) is carried over.
 */
function validatingMethod(
  method: (...args: unknown[]) => unknown,
  dto: DtoClass,
  toolName: string,
): (...args: unknown[]) => unknown {
  const wrapped = async function (this: unknown, args: unknown, ...rest: unknown[]) {
    return method.call(this, await validateDto(dto, args, `arguments for '${toolName}'`), ...rest);
  };
  for (const key of Reflect.getMetadataKeys(method) as unknown[]) {
    Reflect.defineMetadata(key, Reflect.getMetadata(key, method) as unknown, wrapped);
  }
  return wrapped;
}

/**
 * Whether a module imports ParseAgentModule itself (forRoot or forFeature). The library's global
 * module is bound into every module's imports by Nest, so only a declared import counts for it.
 */
function importsTheLibrary(module: NestModule): boolean {
  const declared = (Reflect.getMetadata('imports', module.metatype) ?? []) as unknown[];
  const declaredLibrary = declared.some((entry) => {
    const value = entry as { module?: unknown; forwardRef?: () => unknown } | undefined;
    const target = value?.forwardRef ? value.forwardRef() : (value?.module ?? entry);
    return isParseAgentLibraryModule(target);
  });
  if (declaredLibrary) return true;
  return [...module.imports].some((m) => !m.isGlobal && isParseAgentLibraryModule(m.metatype));
}
