import { Injectable } from '@nestjs/common';
import { BootReport } from './boot-report';

/**
 * Logs once at boot which classes the Parse server has that agents will not see because no model
 * declares them (`unregisteredClasses: 'hidden'`), so an operator notices a class they meant to
 * expose. Runs in the background once Parse Server answered the start-up check.
 */
@Injectable()
export class UnexposedClassesReporter extends BootReport {
  protected override wanted(): boolean {
    return this.metadata.unregisteredClasses === 'hidden';
  }

  protected write(): Promise<string[]> {
    return this.unexposed().then(
      (names) => {
        if (names.length) {
          this.logger.log(
            `Classes on the Parse server not exposed to agents (no registered model, unregisteredClasses: 'hidden'): ${names.join(', ')}. Register a model for a class to expose it.`,
          );
        }
        return names;
      },
      (error: unknown) => this.couldNot('list Parse classes to report unexposed ones', error),
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
