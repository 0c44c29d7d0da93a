import type {
  AggregateOptions,
  DataOperation,
  DataPath,
  DistinctSpec,
  GroupByDateSpec,
  GroupBySpec,
} from '../../ports/data-path';
import type { RedactOptions } from '../../security/redactor';
import type { ReadPolicy } from '../../security/read-policy';
import type { AnalyticsSettings } from '../tool-context';

/**
 * What the reader's join and analytics steps (policed-joins.ts, policed-analytics.ts) use of it:
 * the policy, the identity-bound path per operation, the class gate. Held privately by
 * `PolicedReader`; a tool never sees it, so it never leads back to a raw path.
 */
export interface ReaderCore {
  readonly access: ReadPolicy;
  readonly signal: AbortSignal;
  readonly analytics: AnalyticsSettings;
  gate(className: string): Promise<void>;
  /** The identity-bound path for an operation, chosen once per call. */
  path(operation: DataOperation): DataPath;
  /** The keys a path reads rows of `className` with (see `keysForPath`). */
  pathKeys(
    className: string,
    keys: readonly string[] | undefined,
    include: readonly string[] | undefined,
  ): Promise<string[] | undefined>;
  /** The tool's signal and the pushed-down limit, for every analytics call. */
  options(): AggregateOptions;
}

/** How returned rows are shown: display simplification of typed values, applied with redaction. */
export type DisplayOptions = Pick<RedactOptions, 'simplifyTyped'>;

/**
 * Per include path ("customer", "order.customer"), how many distinct pointed-to objects were not
 * joined because a direct read of their class by this agent does not return them. Those stay bare
 * pointers; their fields are never read into the result.
 */
export type WithheldIncludes = Record<string, number>;

/**
 * An analytics call a path may answer with its own method instead of the pipeline. The where is
 * the caller's and is planned by the reader; the operation's path decides whether it can.
 */
export type NativeAnalytics =
  | { groupBy: Omit<GroupBySpec, 'where'> }
  | { groupByDate: Omit<GroupByDateSpec, 'where'> }
  | {
      distinct: Omit<DistinctSpec, 'where'>;
      sort?: 'asc' | 'desc';
      /** Run the pipeline instead when the path can (array flattening is the pipeline's). */
      pipelineWhenPossible?: boolean;
      /** Only the pipeline answers this call: the refusal when the path cannot run one. */
      pipelineOnly?: string;
    };

/** How a prepared pipeline runs (with the canonical-filter choice given to `prepare`). */
export interface PipelineRun {
  /** The caller's own filter: what the COLLSCAN pre-flight explains and a native call plans. */
  where?: Record<string, unknown>;
  native?: NativeAnalytics;
  display?: DisplayOptions;
}
