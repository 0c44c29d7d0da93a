/** The analytics rules the policed reader applies: pipeline checks, time limits, the COLLSCAN guard. */
import { SecurityBlockedError } from '../../core/errors';
import type { ExplainSummary } from '../../ports/data-path';
import { validatePipeline } from '../../security/pipeline/pipeline-validator';
import type { PipelineLimits, ValidatedPipeline } from '../../security/pipeline/pipeline-policy';
import { pipelinePolicyFor } from '../../security/read-pipeline-policy';
import type { ReadPolicy } from '../../security/read-policy';
import type { AnalyticsSettings, ToolContext } from '../tool-context';

/** Seconds kept between the database's own limit and the tool's, so the database stops first. */
const MAX_TIME_BUFFER_MS = 5_000;

/** The tool timeout minus a buffer, pushed down as MongoDB `maxTimeMS` (at least one second). */
export function maxTimeMsFor(context: Pick<ToolContext, 'timeoutMs'>): number {
  return Math.max(1_000, context.timeoutMs - MAX_TIME_BUFFER_MS);
}

/**
 * Validates a pipeline against the agent's policy: fields, scopes, auto-limit, and the class gate
 * for every class it names (the reader has already gated its own class, with the schema refresh a
 * missing class gets).
 */
export async function validatePipelineFor(
  access: ReadPolicy,
  className: string,
  pipeline: unknown,
  limits: Partial<PipelineLimits>,
  withheld: ReadonlyMap<string, readonly string[]>,
  applyCanonicalFilter: boolean,
  projectEverySource = false,
): Promise<ValidatedPipeline> {
  const policy = await pipelinePolicyFor(access, { withheld, projectEverySource });
  if (!applyCanonicalFilter) {
    // The opt-out covers the pipeline's own class only: classes it joins keep their canonical
    // filter, as the classes of a query's subqueries do. Tenant scope and agent filters stay.
    const unfiltered = await pipelinePolicyFor(access, {
      withheld,
      projectEverySource,
      applyCanonicalFilter: false,
    });
    const scoped = policy.scopeMatches.bind(policy);
    policy.scopeMatches = (name) =>
      name === className ? unfiltered.scopeMatches(name) : scoped(name);
  }
  return validatePipeline(className, pipeline, policy, limits);
}

/** How to get a refused scan through: an index (the operator's) or a filter that uses one. */
const COLLSCAN_FIX =
  'Add a filter on an indexed field (explain_query shows whether a filter uses an index), or ask the operator to add an index on the fields you filter on.';

/** A COLLSCAN the operator asked to refuse (`refuseCollscan`). */
export class CollscanRefusedError extends SecurityBlockedError {
  constructor(
    readonly className: string,
    readonly winningPlan?: unknown,
  ) {
    super(
      `COLLSCAN on ${className}: the query would scan the full collection, which this server refuses (refuseCollscan). ${COLLSCAN_FIX}`,
      `COLLSCAN on ${className}`,
    );
  }
  override get details(): Record<string, unknown> {
    return {
      refused: true,
      reason: this.reason,
      suggestion: COLLSCAN_FIX,
      ...(this.winningPlan !== undefined ? { winning_plan: this.winningPlan } : {}),
    };
  }
}

/**
 * Throws when the operator refuses full collection scans (`refuseCollscan`) and the plan is one,
 * unless the class is marked @AgentAllowCollscan. The plan is shown only with `exposeExplain`.
 */
export function refuseCollectionScan(
  analytics: AnalyticsSettings,
  access: ReadPolicy,
  className: string,
  summary: ExplainSummary,
): void {
  if (!analytics.refuseCollscan || !summary.collectionScan) return;
  if (access.meta(className)?.allowCollscan) return;
  throw new CollscanRefusedError(className, analytics.exposeExplain ? summary.details : undefined);
}
