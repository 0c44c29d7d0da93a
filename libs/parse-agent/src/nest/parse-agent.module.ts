import { ParseAgentLibraryModule } from './parse-agent-library.marker';
import { Module, type DynamicModule } from '@nestjs/common';
import { ParseAgentConfigError } from '../core/errors';
import { MetadataRegistry } from '../metadata/metadata-registry';
import type { ModelClass } from '../metadata/metadata.types';
import { withMcpEndpoint } from './mcp/with-mcp-endpoint';
import { ParseAgentCoreModule } from './parse-agent-core.module';
import { ASYNC_OPTIONS_TYPE, OPTIONS_TYPE } from './parse-agent.module-definition';

let featureCount = 0;

/**
 * `ParseAgentModule.forRoot({ parse: { serverURL, appId, masterKey } })` once in the app module;
 * `ParseAgentModule.forFeature([Order, Customer])` in feature modules to register their models.
 */
@ParseAgentLibraryModule()
@Module({})
export class ParseAgentModule {
  static forRoot(options: typeof OPTIONS_TYPE): DynamicModule {
    return withMcpEndpoint(ParseAgentCoreModule.forRoot(options), options?.mcp);
  }

  static forRootAsync(options: typeof ASYNC_OPTIONS_TYPE): DynamicModule {
    return withMcpEndpoint(ParseAgentCoreModule.forRootAsync(options), options?.mcp);
  }

  static forFeature(models: ModelClass[]): DynamicModule {
    if (!Array.isArray(models) || models.some((m) => typeof m !== 'function')) {
      throw new ParseAgentConfigError(
        'ParseAgentModule.forFeature expects an array of decorated model classes.',
      );
    }
    const token = `PARSE_AGENT_FEATURE_${++featureCount}`;
    return {
      module: ParseAgentModule,
      providers: [
        {
          provide: token,
          useFactory: (registry: MetadataRegistry) => registry.register(...models),
          inject: [MetadataRegistry],
        },
      ],
    };
  }
}
