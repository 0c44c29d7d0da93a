/**
 * What the pipeline validator needs to know about the agent, asked per class. The validator stays pure:
 * the caller answers these from metadata, the agent's options and CLP, and the validator only reads.
 */

/** A Parse where clause / Mongo query document, in API field names. */
export type Where = Record<string, unknown>;
/** One aggregation stage: a single `$stage` key. */
export type Stage = Record<string, unknown>;
export type Pipeline = Stage[];

export interface PipelinePolicy {
  /** Class gate plus CLP: throws AccessDeniedError (hidden_class, class_filter, clp_denied) to refuse. */
  assertClassReadable(className: string): void;
  /** The class's readable fields (@AgentFields), or undefined when every non-internal field is readable. */
  allowedFields(className: string): ReadonlySet<string> | undefined;
  /**
   * The row restrictions that must hold wherever this class's rows enter a pipeline: tenant scope,
   * per-agent filters, canonical filter. One entry per layer; each becomes its own `$match` so audits can
   * tell them apart. Empty when the class is unrestricted.
   */
  scopeMatches(className: string): readonly Where[];
  /** Pointer fields of the class and the class each points to, to check `$lookup` along pointers. */
  pointerTargets?(className: string): Readonly<Record<string, string>>;
}

export interface PipelineLimits {
  /** Stages across the whole pipeline, sub-pipelines included. */
  maxStages: number;
  /** How deeply sub-pipelines ($facet, $lookup, $unionWith) may nest. */
  maxPipelineDepth: number;
  /** How deeply any JSON value may nest. */
  maxJsonDepth: number;
  /** Size of the pipeline as JSON, in bytes. */
  maxBytes: number;
  /** The `$limit` appended when the caller gave no terminal bound. */
  autoLimit: number;
}

export const DEFAULT_PIPELINE_LIMITS: Readonly<PipelineLimits> = Object.freeze({
  maxStages: 50,
  maxPipelineDepth: 8,
  maxJsonDepth: 32,
  maxBytes: 64 * 1024,
  autoLimit: 200,
});

export interface ValidatedPipeline {
  /** The pipeline to run: scope and projections injected, lookups rewritten, API field names. */
  pipeline: Pipeline;
  /** True when `{ $limit: autoLimit }` was appended because the caller gave no terminal bound. */
  autoLimited: boolean;
  autoLimit: number;
  /** Every class the pipeline reads, the root first, each once. */
  classes: string[];
  /**
   * The root class's column whose values a top-level output field holds unchanged (a column kept
   * as is, a "$column" copy, a grouping key on one column), or undefined when the output was
   * computed or mixed with another class's rows. What pointer compaction may rely on.
   */
  columnOrigin(outputField: string): string | undefined;
}
