import { Module, type DynamicModule } from '@nestjs/common';
import type { DemoSettings } from './config/demo-config';
import { HealthController } from './health.controller';

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
    return {
      module: AppModule,
      controllers: [HealthController],
      providers: [{ provide: DEMO_RUNTIME, useValue: runtime }],
    };
  }
}
