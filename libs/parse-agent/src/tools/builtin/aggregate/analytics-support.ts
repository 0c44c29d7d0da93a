/** What the aggregation tools share: the run through the policed reader, dry runs, notes. */
import { AccessDeniedError } from '../../../core/errors';
import type { DataOperation, DataRow, GroupBySpec } from '../../../ports/data-path';
import { WITHHELD_NOTE } from '../../../format/query-result';
import {
  GROUP_BY_DEFAULT_LIMIT,
  GROUP_BY_MAX_LIMIT,
  resolveLimit,
  type GroupOperation,
  type GroupSort,
} from '../../../security/pipeline/group-by-pipeline';
import type { ReadPolicy } from '../../../security/read-policy';
import type { NativeAnalytics, PolicedReader } from '../../read/policed-reader';
import { dryRunFlag } from '../dry-run-flag';
import type { GroupArgs } from './analytics-schemas';

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

/** A helper tool's limit argument: its default and maximum. */
export interface LimitRange {
  default: number;
  max: number;
}

export const GROUP_LIMITS: LimitRange = {
  default: GROUP_BY_DEFAULT_LIMIT,
  max: GROUP_BY_MAX_LIMIT,
};

/** The class gate, then the limit argument: a hidden class is refused before any argument error. */
export async function gatedLimit(
  read: PolicedReader,
  className: string,
  limit: number | undefined,
  range: LimitRange = GROUP_LIMITS,
): Promise<number> {
  await read.gate(className);
  return resolveLimit(limit, range.default, range.max);
}

/** A path's own group-by speaks these operation names. */
export function pathOperation(op: GroupOperation | undefined): GroupBySpec['operation'] {
  return op === 'average' ? 'avg' : (op ?? 'count');
}

/** What group_by and group_by_date derive alike from their arguments and resolved limit. */
export function groupCall(args: GroupArgs, limit: number, defaultSort: GroupSort) {
  return {
    /** The pipeline builder's common parameters. */
    pipeline: {
      field: args.field,
      where: args.where,
      operation: args.operation,
      valueField: args.value_field,
      limit,
      sort: args.sort,
    },
    /** The native group-by spec (the reader adds the planned where). */
    native: {
      field: args.field,
      operation: pathOperation(args.operation),
      valueField: args.value_field,
      limit,
    } satisfies Omit<GroupBySpec, 'where'>,
    /** The dry-run parameters after the field, defaults filled in. */
    parameters: {
      operation: args.operation ?? 'count',
      value_field: args.value_field,
      sort: args.sort ?? defaultSort,
      limit,
      ...canonicalEcho(args.apply_canonical_filter),
    },
    /** What the result echoes of the call besides the field: the operation exactly as asked. */
    echo: {
      operation: args.operation ?? 'count',
      ...(args.value_field !== undefined ? { value_field: args.value_field } : {}),
      ...canonicalEcho(args.apply_canonical_filter),
    },
  };
}

/** `apply_canonical_filter: false` echoed when the caller left the canonical filter out. */
export function canonicalEcho(apply: boolean | undefined): { apply_canonical_filter?: false } {
  return apply === false ? { apply_canonical_filter: false } : {};
}

/** One call of a helper tool (group_by, group_by_date, distinct) over the pipeline it built. */
export interface HelperCall {
  /** The caller-level pipeline the tool built from its arguments. */
  pipeline: unknown[];
  /** The caller's where (the COLLSCAN pre-flight's filter and a native call's). */
  where?: Record<string, unknown>;
  /** The path's own method for the call, when it has one and the call is simple enough. */
  native?: NativeAnalytics;
  /** A grouped field whose pointer target must be readable, and is reported (pointer_class). */
  pointerField?: string;
  /** The dry_run argument; with true the envelope shows `parameters` and the pipeline. */
  dryRun?: unknown;
  /** false: leave the class's canonical filter out (`apply_canonical_filter`). */
  applyCanonicalFilter?: boolean;
  parameters: Record<string, unknown>;
}

/**
 * group_by, group_by_date and distinct in one sequence: every policy check on the pipeline (and a
 * grouped pointer's target) before a dry run returns, then the redacted rows.
 */
export async function runHelper(
  read: PolicedReader,
  operation: DataOperation,
  className: string,
  call: HelperCall,
): Promise<{ dryRun: Record<string, unknown> } | { rows: DataRow[]; pointerClass?: string }> {
  // A pointer into a hidden class first: its refusal does not name the class, where the
  // pipeline's would only call the field unreadable.
  await read.gate(className);
  const pointerClass =
    call.pointerField === undefined
      ? undefined
      : await pointerTarget(read.access, className, call.pointerField);
  const prepared = await read.prepare(operation, className, call.pipeline, {
    applyCanonicalFilter: call.applyCanonicalFilter,
  });
  if (dryRunFlag(call.dryRun)) {
    return { dryRun: dryRunEnvelope(className, call.parameters, call.pipeline) };
  }
  const rows = await prepared.run({ where: call.where, native: call.native });
  return { rows, pointerClass };
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

/** The caller's leading `$match`, the filter the COLLSCAN pre-flight explains. */
export function leadingMatch(pipeline: unknown): Record<string, unknown> | undefined {
  const first = Array.isArray(pipeline) ? (pipeline[0] as Record<string, unknown>) : undefined;
  const match = first?.$match;
  return typeof match === 'object' && match !== null && !Array.isArray(match)
    ? (match as Record<string, unknown>)
    : undefined;
}
