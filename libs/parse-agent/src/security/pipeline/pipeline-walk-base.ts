/**
 * The state a pipeline walk carries across stages (the classes read, the facts for whole-pipeline
 * checks, the limits) and what every stage family uses: class reads, the source prefix that scopes and
 * projects a class's rows, and the check on names a stage creates. The stage families extend it.
 */
import { AccessDeniedError, AgentValidationError } from '../../core/errors';
import { ALWAYS_READABLE, FieldTracker } from './field-tracker';
import { isInternalField } from '../../query/internal-fields';
import { apiNameForStorage, assertNotInternal } from './pipeline-field-rules';
import { WalkFacts } from './pipeline-expressions';
import { Pipeline, PipelineLimits, PipelinePolicy } from './pipeline-policy';

export abstract class PipelineWalkBase {
  private readonly classesRead: string[] = [];
  private readonly unrestricted = new Set<string>();
  protected readonly facts: WalkFacts = { usesObjectToArray: false };

  constructor(
    protected readonly policy: PipelinePolicy,
    protected readonly lim: PipelineLimits,
  ) {}

  readClass(className: unknown): string {
    if (typeof className !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(className)) {
      throw new AgentValidationError(
        `Class name ${JSON.stringify(className)} is not a valid Parse class name.`,
      );
    }
    this.policy.assertClassReadable(className);
    if (!this.classesRead.includes(className)) this.classesRead.push(className);
    if (!this.policy.allowedFields(className)) this.unrestricted.add(className);
    return className;
  }

  classes(): string[] {
    return [...this.classesRead];
  }

  /** Whole-pipeline checks that need every stage seen first. */
  finish(): void {
    if (this.facts.usesObjectToArray && this.unrestricted.size > 0) {
      const names = [...this.unrestricted].join(', ');
      throw new AccessDeniedError(
        `'$objectToArray' turns field names into values, so it is only allowed when every class the ` +
          `pipeline reads has a field allowlist; ${names} has none. Name the fields you need instead.`,
        { kind: 'field_denied', deniedField: '$objectToArray' },
      );
    }
  }

  /** The stages that must open any pipeline reading `className`: its scopes, then its allowlist. */
  sourcePrefix(className: string): Pipeline {
    return [...this.scopeStages(className), ...this.projectionStages(className)];
  }

  protected scopeStages(className: string): Pipeline {
    return this.policy.scopeMatches(className).map((where) => ({ $match: structuredClone(where) }));
  }

  protected projectionStages(className: string): Pipeline {
    const allowed = this.policy.allowedFields(className);
    if (!allowed) return [];
    const projection: Record<string, 1> = {};
    for (const name of [...ALWAYS_READABLE, ...[...allowed].sort()]) {
      if (!isInternalField(name)) projection[name] = 1;
    }
    return [{ $project: projection }];
  }

  abstract stages(pipeline: unknown[], fields: FieldTracker, depth: number): Pipeline;

  /** A name a stage creates. `dotted` allows `a.b` (sets a sub-field of `a`). */
  protected outputName(
    where: string,
    name: unknown,
    fields: FieldTracker,
    dotted: boolean,
  ): string {
    if (typeof name !== 'string' || name.length === 0 || name.startsWith('$')) {
      throw new AgentValidationError(
        `${where}: output field names must be non-empty strings not starting with '$' (got ${JSON.stringify(name)}).`,
      );
    }
    if (!dotted && name.includes('.')) {
      throw new AgentValidationError(`${where}: output field '${name}' may not contain '.'.`);
    }
    assertNotInternal(name);
    const root = name.split('.')[0];
    if (
      apiNameForStorage(root, true) !== undefined &&
      !(root === '_id' && fields.isProduced('_id'))
    ) {
      // Writing a storage spelling would confuse the storage translation; treat it like a read.
      fields.assertReadable(name, false);
    }
    return name;
  }
}

export function positiveInteger(where: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new AgentValidationError(
      `'${where}' must be an integer >= ${min} (got ${JSON.stringify(value)}).`,
    );
  }
  return value;
}
