import { AgentValidationError } from '../../core/errors';
import { columnRef } from './pg-identifiers';
import type { SqlParams } from './sql-params';

/** Who reads: `'*'`, a user objectId, `'role:Name'`s; or `'master'`, which bypasses row ACL. */
export type Principals = readonly string[] | 'master';

/**
 * The row-ACL filter exactly as Parse Server applies it on PostgreSQL: a row is readable when
 * `_rperm` is NULL (no ACL: public) or shares an entry with the reader's principals. Parse always
 * adds `'*'` (rows readable by everyone), so this does too. `'master'` gives no filter.
 */
export function aclClause(principals: Principals, params: SqlParams, alias?: string): string {
  if (principals === 'master') return 'TRUE';
  if (!Array.isArray(principals)) {
    throw new AgentValidationError("principals must be an array of strings or 'master'.");
  }
  const list = new Set<string>(['*']);
  for (const p of principals) {
    if (typeof p !== 'string' || p.length === 0) {
      throw new AgentValidationError('Each principal must be a non-empty string.');
    }
    list.add(p);
  }
  const rperm = columnRef('_rperm', alias);
  return `(${rperm} IS NULL OR ${rperm} && ${params.add([...list])}::text[])`;
}
