import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { McpEndpointOptions } from './mcp/mcp-endpoint-options';
import type { ParseAgentModuleOptions } from '../composition/parse-agent-options.interface';

/** Settings that shape the module itself, so they are synchronous even with forRootAsync. */
export interface ParseAgentModuleExtras {
  /** Register the module globally (default true): feature modules need not import it. */
  isGlobal?: boolean;
  /**
   * Mounts the MCP endpoint (Streamable HTTP) at `mcp.path` behind `mcp.guards`; absent, no endpoint
   * is mounted. Requires the `agentFactory` option.
   */
  mcp?: McpEndpointOptions;
}

export const {
  ConfigurableModuleClass,
  MODULE_OPTIONS_TOKEN: PARSE_AGENT_MODULE_OPTIONS,
  OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<ParseAgentModuleOptions>({ moduleName: 'ParseAgent' })
  .setClassMethodName('forRoot')
  .setExtras<ParseAgentModuleExtras>({ isGlobal: true }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
