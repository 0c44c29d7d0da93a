import type { SqlQuery } from './sql-params';

/**
 * The `'role:Name'` principals of a user, with inheritance. Parse stores role membership in
 * `_Join:users:_Role` (owningId = role, relatedId = user) and inheritance in `_Join:roles:_Role`
 * (owningId = parent role, relatedId = child role whose members inherit the parent's access).
 * UNION (not UNION ALL) stops at cycles. Role rows are read as Parse does: without their ACL.
 *
 * Before any role has members the join tables may not exist: PostgreSQL then fails with 42P01
 * (undefined_table); treat that as "no roles" (see `isUndefinedTableError`).
 */
export function userRolesQuery(userId: string): SqlQuery {
  return {
    text: [
      'WITH RECURSIVE granted(role_id) AS (',
      '  SELECT m."owningId" FROM "_Join:users:_Role" AS m WHERE m."relatedId" = $1::text',
      '  UNION',
      '  SELECT i."owningId" FROM "_Join:roles:_Role" AS i JOIN granted AS g ON i."relatedId" = g.role_id',
      ')',
      `SELECT 'role:' || r."name" AS principal FROM "_Role" AS r`,
      '  JOIN granted AS g ON r."objectId" = g.role_id',
      '  WHERE r."name" IS NOT NULL',
      '  ORDER BY 1',
    ].join('\n'),
    values: [userId],
  };
}

/** The full principal list for a signed-in user: `'*'`, the user's objectId and its roles. */
export function userPrincipals(userId: string, roleRows: ReadonlyArray<{ principal: string }>) {
  return ['*', userId, ...roleRows.map((row) => row.principal)];
}

/** True for PostgreSQL's "relation does not exist" error (a `_Join` table not created yet). */
export function isUndefinedTableError(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '42P01';
}

/**
 * The `'role:Name'` principals an aclRole scope acts with: the role itself and every role it
 * inherits access from (roles whose `roles` relation holds it, transitively).
 */
export function rolePrincipalsQuery(roleName: string): SqlQuery {
  return {
    text: [
      'WITH RECURSIVE granted(role_id) AS (',
      '  SELECT r."objectId" FROM "_Role" AS r WHERE r."name" = $1::text',
      '  UNION',
      '  SELECT i."owningId" FROM "_Join:roles:_Role" AS i JOIN granted AS g ON i."relatedId" = g.role_id',
      ')',
      `SELECT 'role:' || r."name" AS principal FROM "_Role" AS r`,
      '  JOIN granted AS g ON r."objectId" = g.role_id',
      '  WHERE r."name" IS NOT NULL',
      '  ORDER BY 1',
    ].join('\n'),
    values: [roleName],
  };
}
