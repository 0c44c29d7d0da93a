import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchemaCache } from '../data/schema-cache';
import { MetadataRegistry } from '../metadata/metadata-registry';

/**
 * Logs once at boot which classes the Parse server has that agents will not see because no model
 * declares them (`unregisteredClasses: 'hidden'`), so an operator notices a class they meant to
 * expose. Runs in the background: an unreachable Parse Server never delays or fails the boot.
 */
@Injectable()
export class UnexposedClassesReporter implements OnApplicationBootstrap {
  protected readonly logger = new Logger('ParseAgent');
  /** Settles when the report is written (tests await it). */
  report?: Promise<string[]>;

  constructor(
    protected readonly metadata: MetadataRegistry,
    protected readonly schemas: SchemaCache,
  ) {}

  onApplicationBootstrap(): void {
    if (this.metadata.unregisteredClasses !== 'hidden') return;
    this.report = this.unexposed().then(
      (names) => {
        if (names.length) {
          this.logger.log(
            `Classes on the Parse server not exposed to agents (no registered model, unregisteredClasses: 'hidden'): ${names.join(', ')}. Register a model for a class to expose it.`,
          );
        }
        return names;
      },
      (error: unknown) => {
        this.logger.warn(
          `Could not list Parse classes to report unexposed ones: ${(error as Error)?.message ?? String(error)}`,
        );
        return [];
      },
    );
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
