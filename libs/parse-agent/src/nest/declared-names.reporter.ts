import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchemaCache } from '../data/schema-cache';
import { auditDeclaredNames, declaredNameWarnings } from '../metadata/metadata-audit';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { ParseAgentStartupCheck } from './parse-agent-startup-check';

/**
 * Warns once at boot about names the models declare that their classes on the Parse server do not
 * have (an @AgentTenantScope field, an @AgentFields entry, a canonical filter's field...), one
 * line per class naming the model, the names and the class's real fields. Reads resting on such a
 * name are refused, so the operator hears about it before an agent does. Runs in the background
 * once Parse Server answered the start-up check, like the unexposed-classes report.
 */
@Injectable()
export class DeclaredNamesReporter implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger('ParseAgent');
  protected closed = false;
  /** Settles with the warnings once they are written (tests await it). */
  report?: Promise<string[]>;

  constructor(
    protected readonly metadata: MetadataRegistry,
    protected readonly schemas: SchemaCache,
    protected readonly startupCheck: ParseAgentStartupCheck,
  ) {}

  onApplicationBootstrap(): void {
    this.report = this.startupCheck
      .parseAnswered()
      .then((answered) => (answered ? this.warn() : []));
  }

  onApplicationShutdown(): void {
    this.closed = true;
  }

  protected async warn(): Promise<string[]> {
    try {
      const schemas = await this.schemas.all();
      const lines = declaredNameWarnings(auditDeclaredNames(this.metadata, schemas.values()));
      if (!this.closed) for (const line of lines) this.logger.warn(line);
      return lines;
    } catch (error) {
      // Cut off by the application closing: nothing an operator needs to hear about.
      if (!this.closed) {
        this.logger.warn(
          `Could not check the models' field names against the Parse classes: ${(error as Error)?.message ?? String(error)}`,
        );
      }
      return [];
    }
  }
}
