import { AccessDeniedError } from '../../core/errors';
import type { DataRow } from '../../ports/data-path';
import { andWhere } from '../../query/where-composer';
import type { PlannedRead } from '../../security/read-policy';
import { includeTree, joinKey, keysBelow, pointersIn, slices, withJoined } from './include-joins';
import type { ReaderCore, WithheldIncludes } from './reader-core';

/** Most objectIds one joined read names (one `$in`); more are read in several. */
const JOIN_IDS_PER_READ = 500;

/**
 * Expands the plan's includes. Each joined class is read here as a direct read of that class by
 * this agent would read it (class gate, its tenant scope, canonical filter and the agent's
 * filters for it, on the same identity-bound path, so row ACL, CLP and protectedFields too),
 * restricted to the pointed-to ids; nested includes are joined the same way, level by level.
 * A pointer whose object that read does not return stays a bare pointer and is counted per
 * include path. Redaction then cuts joined rows to their class's allowlist, as it does for rows
 * read directly. The holder rows are copied where a pointer is replaced, never changed.
 */
export async function joinIncludes(
  reader: ReaderCore,
  rows: DataRow[],
  plan: PlannedRead,
  applyCanonicalFilter: boolean,
): Promise<{ rows: DataRow[]; withheld: WithheldIncludes }> {
  const withheld: WithheldIncludes = {};
  if (!plan.include?.length || !rows.length) return { rows, withheld };
  const joined = await joinLevel(reader, rows, plan.include, plan.keys, {
    canonical: applyCanonicalFilter,
    prefix: '',
    withheld,
  });
  return { rows: joined, withheld };
}

async function joinLevel(
  reader: ReaderCore,
  rows: DataRow[],
  include: readonly string[],
  keys: readonly string[] | undefined,
  join: { canonical: boolean; prefix: string; withheld: WithheldIncludes },
): Promise<DataRow[]> {
  let current = rows;
  for (const [head, below] of includeTree(include)) {
    const wanted = new Map<string, Set<string>>();
    for (const row of current) {
      for (const ptr of pointersIn(row[head])) {
        let ids = wanted.get(ptr.className);
        if (!ids) wanted.set(ptr.className, (ids = new Set()));
        ids.add(ptr.objectId);
      }
    }
    if (!wanted.size) continue;
    const path = `${join.prefix}${head}`;
    const found = new Map<string, DataRow>();
    let missing = 0;
    for (const [target, ids] of wanted) {
      // A class the agent may not see: redaction shows its pointers as redacted, unread.
      if (reader.access.isDenied(target)) continue;
      const rowsOfTarget = await joinedRows(reader, target, [...ids], keysBelow(keys, head), {
        ...join,
        include: below,
        prefix: `${path}.`,
      });
      for (const id of ids) {
        const row = rowsOfTarget.get(id);
        if (row) found.set(joinKey(target, id), row);
        else missing += 1;
      }
    }
    if (missing) join.withheld[path] = (join.withheld[path] ?? 0) + missing;
    if (!found.size) continue;
    current = current.map((row) =>
      pointersIn(row[head]).length ? { ...row, [head]: withJoined(row[head], found) } : row,
    );
  }
  return current;
}

/**
 * The rows of `target` with these ids that a direct read by this agent returns, by objectId,
 * shaped as joined objects. A class the policy refuses to this agent (missing, or needing a
 * tenant binding it lacks) joins nothing; a data path's own refusal fails the read, as it would
 * for a direct read.
 */
async function joinedRows(
  reader: ReaderCore,
  target: string,
  ids: string[],
  requestedKeys: string[] | undefined,
  join: { canonical: boolean; include: string[]; prefix: string; withheld: WithheldIncludes },
): Promise<Map<string, DataRow>> {
  const out = new Map<string, DataRow>();
  let where: Record<string, unknown>;
  try {
    await reader.gate(target);
    ({ where } = await reader.access.planWhere(target, {}, join.canonical, true));
  } catch (error) {
    if (error instanceof AccessDeniedError) return out;
    throw error;
  }
  const keys = reader.access.joinedKeys(target, requestedKeys);
  const readKeys = await reader.pathKeys(target, keys, join.include);
  const asked = new Set(ids);
  let rows: DataRow[] = [];
  for (const slice of slices(ids, JOIN_IDS_PER_READ)) {
    const found = await reader.path('find').find(
      target,
      {
        where: andWhere(where, { objectId: { $in: slice } }),
        keys: readKeys,
        limit: slice.length,
      },
      reader.signal,
    );
    // Only the ids asked for: a path that over-answers adds nothing.
    for (const row of found) {
      const id = row.objectId;
      if (typeof id === 'string' && asked.has(id)) {
        asked.delete(id);
        rows.push(row);
      }
    }
  }
  if (join.include.length) rows = await joinLevel(reader, rows, join.include, keys, join);
  for (const row of rows) {
    out.set(row.objectId as string, { ...row, __type: 'Object', className: target });
  }
  return out;
}
