import { Module } from '@nestjs/common';
import { ParseAgentModule } from 'nestjs-parse-agent';
import { SupportTicket } from '../models';

/** A feature module registering its own model, the way a larger app splits its domain. */
@Module({ imports: [ParseAgentModule.forFeature([SupportTicket])] })
export class SupportModule {}
