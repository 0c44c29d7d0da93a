import type { MongoDatabaseLike, MongoDoc } from './mongo-driver';

export interface MongoField {
  type: string;
  targetClass?: string;
}

/** Class-level permissions as Parse stores them (`_metadata.class_permissions`). */
export type ClassPermissions = Record<string, unknown>;

export interface MongoClassSchema {
  className: string;
  /** API field names and Parse types (Pointer, Relation, Date, String...). */
  fields: Record<string, MongoField>;
  /** Undefined when the class has no CLP stored (Parse then allows every operation). */
  clp?: ClassPermissions;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'String',
  number: 'Number',
  boolean: 'Boolean',
  date: 'Date',
  object: 'Object',
  array: 'Array',
  geopoint: 'GeoPoint',
  file: 'File',
  bytes: 'Bytes',
  polygon: 'Polygon',
  acl: 'ACL',
};

/** One `_SCHEMA` document (`{ _id: 'Order', total: 'number', owner: '*_User', _metadata }`). */
export function schemaFromMongoDoc(doc: MongoDoc): MongoClassSchema {
  const fields: Record<string, MongoField> = {
    objectId: { type: 'String' },
    createdAt: { type: 'Date' },
    updatedAt: { type: 'Date' },
  };
  for (const [name, raw] of Object.entries(doc)) {
    if (name.startsWith('_') || typeof raw !== 'string') continue;
    if (raw.startsWith('*')) fields[name] = { type: 'Pointer', targetClass: raw.slice(1) };
    else if (raw.startsWith('relation<'))
      fields[name] = { type: 'Relation', targetClass: raw.slice(9, -1) };
    else fields[name] = { type: TYPE_NAMES[raw] ?? raw };
  }
  const metadata = doc._metadata as { class_permissions?: ClassPermissions } | undefined;
  return { className: String(doc._id), fields, clp: metadata?.class_permissions };
}

/**
 * `_SCHEMA` read straight from the database this path queries, cached for `ttlMs` (CLP changes are
 * rare, schema reads on every call are not). `invalidate(className?)` drops one class or all.
 */
export class MongoSchemaCache {
  protected readonly cached = new Map<string, { at: number; schema?: MongoClassSchema }>();

  constructor(
    protected readonly db: () => Promise<MongoDatabaseLike>,
    protected readonly collectionName: (className: string) => string,
    protected readonly ttlMs = 3_600_000,
    protected readonly now: () => number = () => Date.now(),
  ) {}

  /** Undefined when the class does not exist. */
  async get(className: string): Promise<MongoClassSchema | undefined> {
    const hit = this.cached.get(className);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.schema;
    const db = await this.db();
    const [doc] = await db
      .collection(this.collectionName('_SCHEMA'))
      .find({ _id: className })
      .toArray();
    const schema = doc ? schemaFromMongoDoc(doc) : undefined;
    this.cached.set(className, { at: this.now(), schema });
    return schema;
  }

  invalidate(className?: string): void {
    if (className === undefined) this.cached.clear();
    else this.cached.delete(className);
  }
}
