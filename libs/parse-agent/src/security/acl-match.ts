import { AgentValidationError } from '../core/errors';
import type { DataPrincipals } from '../ports/data-path';

/**
 * Row-ACL filters for an application's own queries (custom tools, agent methods) on the direct
 * database paths, built from an agent's principals (`agentPrincipals(context)`). They apply Parse's
 * rule: a row is readable (writable) when it has no ACL or its `_rperm` (`_wperm`) names `*` or
 * one of the principals. The master key gets no filter, as on Parse. Pure: data in, data out.
 */

/** A `$match` stage on Parse-on-MongoDB storage names. */
export interface AclMatchStage {
  $match: Record<string, { $in: Array<string | null> }>;
}

/** A SQL condition with its positional parameters, for Parse-on-PostgreSQL tables. */
export interface AclSqlClause {
  /** `TRUE` for the master key; else a parenthesized condition using `$<firstParam>`. */
  text: string;
  /** The parameter values, in order: the principals as one `text[]`. */
  values: string[][];
}

export interface AclSqlOptions {
  /** The table alias the columns are qualified with (`o` gives `"o"."_rperm"`). */
  alias?: string;
  /** The number of the placeholder to use (default 1): the count of your parameters before it, plus one. */
  firstParam?: number;
}

const ALIAS = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * The principals to match, `*` first and without repeats; undefined for the master key. Anything
 * that is not `{ master: true }` or `{ master: false, principals: string[] }` is refused: a
 * missing filter must never be the result of a mistake.
 */
function principalList(who: DataPrincipals): string[] | undefined {
  if (typeof who !== 'object' || who === null) {
    throw new AgentValidationError(
      'Pass the agent’s principals as agentPrincipals(context) returns them ({ master: true } or { master: false, principals: [...] }).',
    );
  }
  if (who.master === true) return undefined;
  if (who.master !== false || !Array.isArray(who.principals)) {
    throw new AgentValidationError(
      'principals must be { master: false, principals: string[] } or { master: true } (as agentPrincipals(context) returns them).',
    );
  }
  const list = new Set<string>(['*']);
  for (const p of who.principals) {
    if (typeof p !== 'string' || !p.length) {
      throw new AgentValidationError(
        `Each principal must be a non-empty string ('*', a user objectId or 'role:Name'); got ${JSON.stringify(p)}.`,
      );
    }
    list.add(p);
  }
  return [...list];
}

function matchStage(column: '_rperm' | '_wperm', who: DataPrincipals): AclMatchStage | undefined {
  const list = principalList(who);
  if (!list) return undefined;
  // `null` in `$in` matches a missing field too: a row without an ACL is public, as on Parse.
  return { $match: { [column]: { $in: [null, ...list] } } };
}

/**
 * A `$match` stage keeping the documents these principals may read, for a pipeline on a
 * Parse-on-MongoDB collection: put it first, and first in every `$lookup`/`$unionWith`
 * sub-pipeline. Undefined for the master key (no row ACL applies).
 */
export function aclReadMatchStage(who: DataPrincipals): AclMatchStage | undefined {
  return matchStage('_rperm', who);
}

/** Like `aclReadMatchStage`, for the documents these principals may write (`_wperm`). */
export function aclWriteMatchStage(who: DataPrincipals): AclMatchStage | undefined {
  return matchStage('_wperm', who);
}

function sqlClause(
  column: '_rperm' | '_wperm',
  who: DataPrincipals,
  options: AclSqlOptions = {},
): AclSqlClause {
  const { alias, firstParam = 1 } = options;
  if (alias !== undefined && (typeof alias !== 'string' || !ALIAS.test(alias))) {
    throw new AgentValidationError(
      `alias must be a plain SQL identifier (letters, digits, underscores); got ${JSON.stringify(alias)}.`,
    );
  }
  if (!Number.isInteger(firstParam) || firstParam < 1 || firstParam > 65_535) {
    throw new AgentValidationError(
      `firstParam must be the placeholder number to use (an integer from 1); got ${JSON.stringify(firstParam)}.`,
    );
  }
  const list = principalList(who);
  if (!list) return { text: 'TRUE', values: [] };
  const ref = alias ? `"${alias}"."${column}"` : `"${column}"`;
  // NULL is a row without an ACL (public); `&&` is array overlap, as Parse queries it.
  return { text: `(${ref} IS NULL OR ${ref} && $${firstParam}::text[])`, values: [list] };
}

/**
 * The SQL condition keeping the rows these principals may read, for a query on a
 * Parse-on-PostgreSQL table: AND it into your WHERE and append `values` to your parameters.
 * `TRUE` (no parameters) for the master key.
 */
export function aclReadSqlClause(who: DataPrincipals, options?: AclSqlOptions): AclSqlClause {
  return sqlClause('_rperm', who, options);
}

/** Like `aclReadSqlClause`, for the rows these principals may write (`_wperm`). */
export function aclWriteSqlClause(who: DataPrincipals, options?: AclSqlOptions): AclSqlClause {
  return sqlClause('_wperm', who, options);
}
