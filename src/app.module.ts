import { Module, type DynamicModule } from '@nestjs/common';
import { ParseAgentModule } from 'nestjs-parse-agent';
import type { DemoSettings } from './config/demo-config';
import { CORE_MODELS } from './demo/models';
import { HealthController } from './health.controller';
import { SupportModule } from './support/support.module';

export interface DemoRuntime {
  settings: DemoSettings;
  /** Where the demo reaches Parse Server (embedded: the in-process mount). */
  parseServerURL: string;
}

export const DEMO_RUNTIME = Symbol('DEMO_RUNTIME');

/** The demo application: what a user of nestjs-parse-agent would write in their own app. */
@Module({})
export class AppModule {
  static forRoot(runtime: DemoRuntime): DynamicModule {
    const { settings } = runtime;
    return {
      module: AppModule,
      imports: [
        ParseAgentModule.forRoot({
          parse: {
            serverURL: runtime.parseServerURL,
            appId: settings.appId,
            masterKey: settings.masterKey,
            javascriptKey: settings.mode === 'external' ? settings.javascriptKey : undefined,
          },
          models: CORE_MODELS,
          defaults: { permissions: 'readonly' },
        }),
        SupportModule,
      ],
      controllers: [HealthController],
      providers: [{ provide: DEMO_RUNTIME, useValue: runtime }],
    };
  }
}
