import { Module } from '@nestjs/common';
import { ParseAgentModule } from 'nestjs-parse-agent';
import { OrderSummaryTool } from './order-summary.tool';

/**
 * A feature module holding a tool of the app's own. The library looks for @AgentTool providers in
 * the modules that import ParseAgentModule, so this one imports it (with no models of its own).
 */
@Module({ imports: [ParseAgentModule.forFeature([])], providers: [OrderSummaryTool] })
export class ReportsModule {}
