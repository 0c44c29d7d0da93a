import { Injectable } from '@nestjs/common';
import { auditDeclaredNames, declaredNameWarnings } from '../metadata/metadata-audit';
import { BootReport } from './boot-report';

/**
 * Warns once at boot about names the models declare that their classes on the Parse server do not
 * have (an @AgentTenantScope field, an @AgentFields entry, a canonical filter's field...), one
 * line per class naming the model, the names and the class's real fields. Reads resting on such a
 * name are refused, so the operator hears about it before an agent does. Runs in the background
 * once Parse Server answered the start-up check, like the unexposed-classes report.
 */
@Injectable()
export class DeclaredNamesReporter extends BootReport {
  protected async write(): Promise<string[]> {
    try {
      const schemas = await this.schemas.all();
      const lines = declaredNameWarnings(auditDeclaredNames(this.metadata, schemas.values()));
      if (!this.closed) for (const line of lines) this.logger.warn(line);
      return lines;
    } catch (error) {
      return this.couldNot("check the models' field names against the Parse classes", error);
    }
  }
}
