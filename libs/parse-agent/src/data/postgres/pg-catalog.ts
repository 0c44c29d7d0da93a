import { mergeProtectedFields, type ClassLevelPermissions } from './class-level-permissions';
import { schemaFromRow, schemaRowsQuery, type PgClassSchema, type PgSchemaRow } from './pg-schema';
import type { SqlQuery } from './sql-params';

/** One class as the PostgreSQL path enforces it: columns, CLP and merged protectedFields. */
export interface PgClassInfo {
  schema: PgClassSchema;
  clp?: ClassLevelPermissions;
  protectedFields: Record<string, string[]>;
}

export interface PgCatalogSnapshot {
  schemas: Record<string, PgClassSchema>;
  classes: ReadonlyMap<string, PgClassInfo>;
}

/**
 * `_SCHEMA` read straight from the database and kept for `ttlMs`: every query needs the column
 * types, CLP and protectedFields, and they change rarely. `invalidate()` drops the copy (call it
 * after a schema change); concurrent readers share one load.
 */
export class PgCatalog {
  protected cached?: { at: number; snapshot: PgCatalogSnapshot };
  protected inflight?: Promise<PgCatalogSnapshot>;

  constructor(
    protected readonly run: (query: SqlQuery) => Promise<Record<string, unknown>[]>,
    protected readonly options: {
      ttlMs?: number;
      /** Parse Server's `protectedFields` option (per class, per principal), merged as Parse does. */
      serverProtectedFields?: Record<string, Record<string, readonly string[]>>;
      now?: () => number;
    } = {},
  ) {}

  protected now(): number {
    return (this.options.now ?? Date.now)();
  }

  async snapshot(): Promise<PgCatalogSnapshot> {
    const ttl = this.options.ttlMs ?? 30_000;
    if (this.cached && this.now() - this.cached.at < ttl) return this.cached.snapshot;
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  invalidate(): void {
    this.cached = undefined;
  }

  protected async load(): Promise<PgCatalogSnapshot> {
    const rows = (await this.run(schemaRowsQuery())) as unknown as PgSchemaRow[];
    const schemas: Record<string, PgClassSchema> = Object.create(null) as Record<
      string,
      PgClassSchema
    >;
    const classes = new Map<string, PgClassInfo>();
    for (const row of rows) {
      const { schema } = schemaFromRow(row);
      const clp = row.schema.classLevelPermissions;
      const protectedFields = mergeProtectedFields(
        clp?.protectedFields,
        this.options.serverProtectedFields?.[row.className],
      );
      schemas[row.className] = schema;
      classes.set(row.className, { schema, clp, protectedFields });
    }
    const snapshot = { schemas, classes };
    this.cached = { at: this.now(), snapshot };
    return snapshot;
  }
}
