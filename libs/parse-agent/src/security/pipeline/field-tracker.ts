/**
 * Forward-pass field tracking. Each stage sees the source class's readable fields (until a stage
 * replaces the document shape) plus every field an earlier stage produced. A reference outside both is
 * refused, so group -> match -> sort on an accumulator works while hidden source fields stay unreachable.
 */
import { AccessDeniedError } from '../../core/errors';
import { assertNotInternal, assertNotStorageForm } from './pipeline-field-rules';

/** Fields Parse keeps on every row; always readable when the source documents are. */
export const ALWAYS_READABLE: readonly string[] = ['objectId', 'createdAt', 'updatedAt'];

const ALLOWED_PREVIEW = 20;

export class FieldTracker {
  private constructor(
    readonly className: string,
    /** Source fields still in the stream: a set, 'all' (no allowlist) or 'none' (shape replaced). */
    private source: ReadonlySet<string> | 'all' | 'none',
    private readonly produced: Set<string>,
    /** After $replaceRoot to an unknown document: any non-internal name may be referenced. */
    private opaque: boolean,
    /**
     * Produced top-level names that hold a source column's values unchanged ("$field" copies, a
     * grouping key on one field): output name -> source column. Source columns still in the
     * stream are their own origin. Cleared when another class's rows join the stream.
     */
    private readonly origins: Map<string, string> = new Map(),
    private mixed = false,
  ) {}

  static forClass(className: string, allowed: ReadonlySet<string> | undefined): FieldTracker {
    const source = allowed ? new Set([...allowed, ...ALWAYS_READABLE]) : 'all';
    return new FieldTracker(className, source, new Set(), false);
  }

  clone(): FieldTracker {
    return new FieldTracker(
      this.className,
      this.source,
      new Set(this.produced),
      this.opaque,
      new Map(this.origins),
      this.mixed,
    );
  }

  /**
   * The source column whose values a top-level field holds unchanged, if the pipeline shows it:
   * a column still in the stream, or a name a stage set to a plain "$column" copy. Anything
   * computed, unwound, joined or mixed with another class's rows has none.
   */
  originOf(name: string): string | undefined {
    if (this.mixed || name.includes('.')) return undefined;
    if (this.produced.has(name)) return this.origins.get(name);
    if (this.opaque || this.source === 'none') return undefined;
    return this.source === 'all' || this.source.has(name) ? name : undefined;
  }

  /** The origin of an expression: a plain "$column" reference's, else none. */
  originOfExpression(expression: unknown): string | undefined {
    if (typeof expression !== 'string' || !expression.startsWith('$')) return undefined;
    if (expression.startsWith('$$')) return undefined;
    return this.originOf(expression.slice(1));
  }

  /** A stage set `name` to a copy of a column (`origin`), or to something computed (undefined). */
  produceWithOrigin(name: string, origin: string | undefined): void {
    this.produce(name);
    if (origin !== undefined && !name.includes('.')) this.origins.set(name, origin);
  }

  /** Rows of another class joined the stream: no field's values come from one column any more. */
  mixRows(): void {
    this.mixed = true;
  }

  /** True while the documents still carry the source class's own fields. */
  get sourceOpen(): boolean {
    return this.source !== 'none' && !this.opaque;
  }

  /** The source class's fields are all readable (no allowlist applies). */
  get sourceUnrestricted(): boolean {
    return this.source === 'all';
  }

  /** A stage added (or overwrote) these top-level fields. */
  produce(...names: string[]): void {
    for (const name of names) {
      this.produced.add(rootOf(name));
      this.origins.delete(rootOf(name));
    }
  }

  /** A stage dropped these top-level fields ($unset, exclusion $project). */
  drop(...names: string[]): void {
    for (const name of names) {
      if (name.includes('.')) continue;
      this.produced.delete(name);
      this.origins.delete(name);
    }
  }

  /** A schema-replacing stage: only `names` exist downstream. */
  replace(names: Iterable<string>, origins: ReadonlyMap<string, string> = new Map()): void {
    this.source = 'none';
    this.opaque = false;
    this.produced.clear();
    this.origins.clear();
    for (const name of names) this.produced.add(rootOf(name));
    for (const [name, origin] of origins)
      if (this.produced.has(name)) this.origins.set(name, origin);
  }

  /** The document became something whose fields we cannot list ($replaceRoot to a sub-document). */
  becomeOpaque(): void {
    this.source = 'none';
    this.produced.clear();
    this.origins.clear();
    this.opaque = true;
  }

  isProduced(name: string): boolean {
    return this.produced.has(name);
  }

  producedNames(): string[] {
    return [...this.produced];
  }

  has(name: string): boolean {
    if (this.opaque || this.produced.has(name)) return true;
    if (this.source === 'all') return true;
    return this.source !== 'none' && this.source.has(name);
  }

  /** Readable names for an error message, sorted, produced fields first. */
  available(): string[] {
    const out = [...this.produced].sort();
    if (this.source !== 'none' && this.source !== 'all') {
      for (const name of [...this.source].sort()) if (!this.produced.has(name)) out.push(name);
    }
    return out;
  }

  /**
   * Checks a dotted path the agent reads. `asReference` says it was written as `$path` (for the hint).
   * Internal names fail at any segment; storage spellings fail with the API name to use instead.
   */
  assertReadable(path: string, asReference: boolean): void {
    const shown = (asReference ? '$' : '') + path;
    if (path.length === 0 || path.startsWith('$') || path.split('.').some((s) => s.length === 0)) {
      throw new AccessDeniedError(`'${shown}' is not a valid field path.`, {
        kind: 'field_denied',
        deniedField: path,
      });
    }
    assertNotInternal(path, shown);
    const root = rootOf(path);
    const produced = this.produced.has(root);
    assertNotStorageForm(path, {
      asReference,
      rootIdIsStorage: !produced && !this.opaque,
      allowedFields: this.preview(),
    });
    if (this.has(root)) return;
    const list = this.available();
    const more = list.length > ALLOWED_PREVIEW ? ` (+${list.length - ALLOWED_PREVIEW} more)` : '';
    const why = this.sourceOpen
      ? `is not readable on class '${this.className}' for this agent`
      : `does not exist at this point of the pipeline (an earlier stage replaced the document shape)`;
    throw new AccessDeniedError(
      `Field '${root}' (in '${shown}') ${why}. Allowed here: ${list.slice(0, ALLOWED_PREVIEW).join(', ') || '(none)'}${more}. ` +
        `Reference one of these fields instead.`,
      { kind: 'field_denied', deniedField: root, allowedFields: this.preview() },
    );
  }

  private preview(): string[] {
    return this.available().slice(0, ALLOWED_PREVIEW);
  }
}

export function rootOf(path: string): string {
  const dot = path.indexOf('.');
  return dot === -1 ? path : path.slice(0, dot);
}
