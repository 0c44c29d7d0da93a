import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** Where the seeder's rows go: Parse's /batch endpoint, or straight into Parse's PostgreSQL tables. */
export interface RowWriter {
  /** Creates the rows (Parse REST shapes: ACL, Pointer, Date) and returns their objectIds in order. */
  createMany(className: string, rows: Array<Record<string, unknown>>): Promise<string[]>;
}

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A 10-character objectId like the ones Parse Server makes. */
function newObjectId(): string {
  let id = '';
  for (const byte of randomBytes(10)) id += ID_CHARS[byte % ID_CHARS.length];
  return id;
}

/**
 * One row in the storage shape of Parse Server's PostgreSQL adapter: the ACL as `_rperm` and
 * `_wperm` arrays (as Parse's DatabaseController turns it), a Pointer as the target's objectId,
 * a Date as its ISO time, createdAt and updatedAt set. Only the value types the demo seed uses;
 * anything else is refused rather than stored in a shape Parse would not read back.
 */
export function toStorageRow(
  row: Record<string, unknown>,
  objectId: string,
  now: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { objectId, createdAt: now, updatedAt: now };
  for (const [key, value] of Object.entries(row)) {
    if (key === 'ACL') {
      const acl = value as Record<string, { read?: boolean; write?: boolean }>;
      out._rperm = Object.keys(acl).filter((entry) => acl[entry].read);
      out._wperm = Object.keys(acl).filter((entry) => acl[entry].write);
    } else if (value !== null && typeof value === 'object') {
      const typed = value as { __type?: string; objectId?: string; iso?: string };
      if (typed.__type === 'Pointer') out[key] = typed.objectId;
      else if (typed.__type === 'Date') out[key] = typed.iso;
      else throw new Error(`The bulk seed cannot store ${key}: ${JSON.stringify(value)}`);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/**
 * Writes the seed's rows straight into the tables Parse Server created for their classes (the
 * seeder defines every class and field through Parse's schema API first): one INSERT per call,
 * instead of one Parse write per row. Used for the embedded demo, whose database is Parse's own;
 * Parse reads the rows back like its own (ACLs, pointers and dates included).
 */
export class PostgresRowWriter implements RowWriter {
  private client?: Client;

  constructor(private readonly uri: string) {}

  async createMany(className: string, rows: Array<Record<string, unknown>>): Promise<string[]> {
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(className)) {
      throw new Error(`The bulk seed writes only plain class names, not ${className}`);
    }
    if (!this.client) {
      this.client = new Client({ connectionString: this.uri });
      await this.client.connect();
    }
    const now = new Date().toISOString();
    const ids = rows.map(() => newObjectId());
    const storage = rows.map((row, i) => toStorageRow(row, ids[i], now));
    // PostgreSQL turns each JSON object into a row of the class's table (missing keys are NULL).
    await this.client.query(
      `INSERT INTO "${className}" SELECT * FROM json_populate_recordset(NULL::"${className}", $1)`,
      [JSON.stringify(storage)],
    );
    return ids;
  }

  async close(): Promise<void> {
    await this.client?.end();
    this.client = undefined;
  }
}
