import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { SchemaCache } from '../data/schema-cache';
import { MetadataRegistry } from '../metadata/metadata-registry';
import { ParseAgentStartupCheck } from './parse-agent-startup-check';

/**
 * A report on the models against the Parse classes, written once at boot in the background after
 * Parse Server answered the start-up check: a server that is not listening yet is waited for, one
 * that never answers is reported by the check, not here.
 */
@Injectable()
export abstract class BootReport implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger('ParseAgent');
  protected closed = false;
  /** Settles with the report's lines once they are written (tests await it). */
  report?: Promise<string[]>;

  constructor(
    protected readonly metadata: MetadataRegistry,
    protected readonly schemas: SchemaCache,
    protected readonly startupCheck: ParseAgentStartupCheck,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.wanted()) return;
    this.report = this.startupCheck
      .parseAnswered()
      .then((answered) => (answered ? this.write() : []));
  }

  onApplicationShutdown(): void {
    this.closed = true;
  }

  /** Whether the settings ask for this report at all. */
  protected wanted(): boolean {
    return true;
  }

  /** Writes the report and settles with its lines; failures are logged, not thrown. */
  protected abstract write(): Promise<string[]>;

  /** Says what could not be checked, unless the application is closing (which cut it off). */
  protected couldNot(what: string, error: unknown): string[] {
    if (!this.closed) {
      this.logger.warn(`Could not ${what}: ${(error as Error)?.message ?? String(error)}`);
    }
    return [];
  }
}
