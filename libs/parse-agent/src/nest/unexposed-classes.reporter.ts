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
 * Logs once at boot which classes the Parse server has that agents will not see because no model
 * declares them (`unregisteredClasses: 'hidden'`), so an operator notices a class they meant to
 * expose. Runs in the background once Parse Server answered the start-up check: a server that is
 * not listening yet is waited for, one that never answers is reported by the check, not here.
 */
@Injectable()
export class UnexposedClassesReporter implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger('ParseAgent');
  protected closed = false;
  /** Settles when the report is written (tests await it). */
  report?: Promise<string[]>;

  constructor(
    protected readonly metadata: MetadataRegistry,
    protected readonly schemas: SchemaCache,
    protected readonly startupCheck: ParseAgentStartupCheck,
  ) {}

  onApplicationBootstrap(): void {
    if (this.metadata.unregisteredClasses !== 'hidden') return;
    this.report = this.startupCheck
      .parseAnswered()
      .then((answered) => (answered ? this.list() : []));
  }

  protected list(): Promise<string[]> {
    return this.unexposed().then(
      (names) => {
        if (names.length) {
          this.logger.log(
            `Classes on the Parse server not exposed to agents (no registered model, unregisteredClasses: 'hidden'): ${names.join(', ')}. Register a model for a class to expose it.`,
          );
        }
        return names;
      },
      (error: unknown) => {
        // Cut off by the application closing: nothing an operator needs to hear about.
        if (this.closed) return [];
        this.logger.warn(
          `Could not list Parse classes to report unexposed ones: ${(error as Error)?.message ?? String(error)}`,
        );
        return [];
      },
    );
  }

  onApplicationShutdown(): void {
    this.closed = true;
  }

  /** Server classes hidden only because no model declares them. */
  async unexposed(): Promise<string[]> {
    const all = await this.schemas.all();
    return [...all.keys()]
      .filter((name) => this.metadata.hiddenEntry(name) === undefined)
      .filter((name) => this.metadata.isUnregisteredHidden(name))
      .sort();
  }
}
