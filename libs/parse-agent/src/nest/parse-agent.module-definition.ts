import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { ParseAgentModuleOptions } from './parse-agent-options.interface';

/** Settings that shape the module itself, so they are synchronous even with forRootAsync. */
export interface ParseAgentModuleExtras {
  /** Register the module globally (default true): feature modules need not import it. */
  isGlobal?: boolean;
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
