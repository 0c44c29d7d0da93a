/** What the aggregation tools share: the pipeline policy, path choice, time limits and dry runs. */
import { AccessDeniedError, SecurityBlockedError } from '../../../core/errors';
import { DataPathUnavailableError } from '../../../data/data-router';
import type { AggregateOptions, DataOperation, DataPath, DataRow } from '../../../ports/data-path';
import { WITHHELD_NOTE } from '../../../format/query-result';
import { classesNamed } from '../../../query/pipeline-classes';
import { validatePipeline } from '../../../security/pipeline/pipeline-validator';
import type { PipelineLimits, ValidatedPipeline } from '../../../security/pipeline/pipeline-policy';
import { pipelinePolicyFor } from '../../../security/read-pipeline-policy';
import type { ReadPolicy } from '../../../security/read-policy';
import type { ToolContext } from '../../tool-context';

/** Seconds kept between the database's own limit and the tool's, so the database stops first. */
const MAX_TIME_BUFFER_MS = 5_000;

/** The tool timeout minus a buffer, pushed down as MongoDB `maxTimeMS` (at least one second). */
export function maxTimeMsFor(context: Pick<ToolContext, 'timeoutMs'>): number {
  return Math.max(1_000, context.timeoutMs - MAX_TIME_BUFFER_MS);
}

/**
 * Validates a pipeline against the agent's policy: fields, scopes, auto-limit, and the class gate
 * for every class it names (the tool has already checked its own class_name, with the schema
 * refresh a missing class gets).
 */
export async function validateFor(
  access: ReadPolicy,
  className: string,
  pipeline: unknown,
  limits: Partial<PipelineLimits> = {},
  withheld?: ReadonlyMap<string, readonly string[]>,
  applyCanonicalFilter = true,
): Promise<ValidatedPipeline> {
  const policy = await pipelinePolicyFor(access, { withheld });
  if (!applyCanonicalFilter) {
    // The opt-out covers the pipeline's own class only: classes it joins keep their canonical
    // filter, as the classes of a query's subqueries do. Tenant scope and agent filters stay.
    const unfiltered = await pipelinePolicyFor(access, { withheld, applyCanonicalFilter: false });
    const scoped = policy.scopeMatches.bind(policy);
    policy.scopeMatches = (name) =>
      name === className ? unfiltered.scopeMatches(name) : scoped(name);
  }
  return validatePipeline(className, pipeline, policy, limits);
}

/**
 * Per class the pipeline reads (the root and every $lookup/$unionWith class), the fields Parse's
 * protectedFields hide from this agent, as the path the operation runs on reports them. Empty
 * when no path serves the operation (a dry run still validates) or the path cannot tell.
 */
export async function withheldFor(
  context: ToolContext,
  operation: DataOperation,
  className: string,
  pipeline: unknown,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  let path: DataPath;
  try {
    path = context.dataFor(operation);
  } catch (error) {
    if (error instanceof DataPathUnavailableError) return out;
    throw error;
  }
  if (!path.protectedFields) return out;
  for (const name of new Set([className, ...classesNamed(pipeline)])) {
    // Only classes this agent may read: a hidden class is refused by the validator, unasked.
    if (typeof name !== 'string' || context.access.isDenied(name)) continue;
    const hidden = await path.protectedFields(name, context.signal);
    if (hidden.length) out.set(name, hidden);
  }
  return out;
}

/**
 * The allowlisted fields of `className` the agent's view lacks, as `withheld_fields` reports them
 * (query_class reports protected fields the same way); undefined when nothing was withheld.
 */
export function withheldNote(
  access: ReadPolicy,
  className: string,
  withheld: ReadonlyMap<string, readonly string[]>,
): { withheld_fields: Record<string, string>; withheld_note: string } | undefined {
  const allowed = access.meta(className)?.fields;
  const hidden = withheld.get(className) ?? [];
  const names = allowed ? hidden.filter((f) => allowed.includes(f)) : [];
  if (!names.length) return undefined;
  return {
    withheld_fields: Object.fromEntries(names.sort().map((f) => [f, 'protected'])),
    withheld_note: WITHHELD_NOTE,
  };
}

/** The path the router chooses for the operation; it must be able to run pipelines. */
export function pipelinePath(
  context: ToolContext,
  operation: DataOperation,
): DataPath & {
  aggregate: NonNullable<DataPath['aggregate']>;
} {
  const path = context.dataFor(operation);
  if (!path.aggregate) {
    throw new DataPathUnavailableError(
      `The '${path.kind}' data path chosen for '${operation}' cannot run aggregation pipelines for this agent. Configure a direct database path (mongo or postgres in ParseAgentModule.forRoot).`,
    );
  }
  return path as DataPath & { aggregate: NonNullable<DataPath['aggregate']> };
}

/** What every analytics call passes to its data path: the tool's signal and the pushed-down limit. */
export function pathOptions(context: ToolContext): AggregateOptions {
  return { signal: context.signal, maxTimeMS: maxTimeMsFor(context) };
}

/**
 * Runs a validated pipeline on the path the router chooses for the operation, after the COLLSCAN
 * pre-flight of `preflightWhere` (the caller's own filter).
 */
export async function runPipeline(
  context: ToolContext,
  operation: DataOperation,
  className: string,
  pipeline: Record<string, unknown>[],
  preflightWhere: Record<string, unknown> | undefined,
): Promise<DataRow[]> {
  const path = pipelinePath(context, operation);
  await collscanPreflight(context, path, className, preflightWhere);
  return path.aggregate(className, pipeline, pathOptions(context));
}

/** The class a pointer field points to (schema or @BelongsTo), refusing classes the agent may not see. */
export async function pointerTarget(
  access: ReadPolicy,
  className: string,
  field: string,
): Promise<string | undefined> {
  const type = (await access.fieldTypes(className))[field];
  if (type?.type !== 'Pointer' || !type.targetClass) return undefined;
  if (access.isDenied(type.targetClass)) {
    // The target's name is not said (as for include): it would confirm a hidden class exists.
    throw new AccessDeniedError(
      `'${field}' points to a class this agent cannot read; group by another field.`,
      { kind: 'class_not_found' },
    );
  }
  return type.targetClass;
}

export const DRY_RUN_HINT =
  'dry_run: the pipeline above was built and checked but NOT run. Call again without dry_run to run it, ' +
  'or pass the pipeline (changed as needed) to the aggregate tool for full control.';

/** The dry-run envelope: the caller-level pipeline (scopes are added when it runs) and the parameters. */
export function dryRunEnvelope(
  className: string,
  parameters: Record<string, unknown>,
  pipeline: unknown[],
): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(parameters)) if (v !== undefined) shown[k] = v;
  return { dry_run: true, class_name: className, parameters: shown, pipeline, hint: DRY_RUN_HINT };
}

/** A COLLSCAN the operator asked to refuse (`refuseCollscan`). */
export class CollscanRefusedError extends SecurityBlockedError {
  constructor(
    readonly className: string,
    readonly winningPlan?: unknown,
  ) {
    super(
      `COLLSCAN on ${className}: the query would scan the full collection.`,
      `COLLSCAN on ${className}`,
    );
  }
  override get details(): Record<string, unknown> {
    return {
      refused: true,
      reason: this.reason,
      suggestion:
        'Add a filter on an indexed field, or call explain_query directly to inspect the plan.',
      ...(this.winningPlan !== undefined ? { winning_plan: this.winningPlan } : {}),
    };
  }
}

/**
 * With `refuseCollscan` on, explains the leading filter first and refuses a full collection scan
 * (classes marked @AgentAllowCollscan excepted). A path that cannot explain is not pre-flighted.
 */
export async function collscanPreflight(
  context: ToolContext,
  path: DataPath,
  className: string,
  where: Record<string, unknown> | undefined,
): Promise<void> {
  if (!context.analytics.refuseCollscan || !path.explain) return;
  if (!where || !Object.keys(where).length) return;
  if (context.access.meta(className)?.allowCollscan) return;
  const summary = await path.explain(className, { where }, { signal: context.signal });
  if (summary.collectionScan) {
    throw new CollscanRefusedError(
      className,
      context.analytics.exposeExplain ? summary.details : undefined,
    );
  }
}

/** The caller's leading `$match`, the filter the COLLSCAN pre-flight explains. */
export function leadingMatch(pipeline: unknown): Record<string, unknown> | undefined {
  const first = Array.isArray(pipeline) ? (pipeline[0] as Record<string, unknown>) : undefined;
  const match = first?.$match;
  return typeof match === 'object' && match !== null && !Array.isArray(match)
    ? (match as Record<string, unknown>)
    : undefined;
}

export const DRY_RUN_ARG = {
  type: 'boolean',
  description:
    'true: build and check the pipeline and return it without running it (every access check still applies).',
};
