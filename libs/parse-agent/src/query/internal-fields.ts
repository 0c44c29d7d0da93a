/**
 * Credential and bookkeeping columns that no agent may read, filter on, sort by, group, project or
 * write, in any class, declared or not. This floor holds under the master key too. It is the one
 * list: the read policy, the pipeline validator, redaction, the direct paths' projections, the
 * tabular formats and the write policy all ask `isInternalField`.
 */
export const INTERNAL_FIELDS: ReadonlySet<string> = new Set([
  '_hashed_password',
  // _User's password as a client sends it; on any other class a plain-text credential column.
  'password',
  '_password_history',
  '_session_token',
  '_sessionToken',
  'sessionToken',
  'session_token',
  '_email_verify_token',
  '_perishable_token',
  '_perishable_token_expires_at',
  '_email_verify_token_expires_at',
  '_failed_login_count',
  '_account_lockout_expires_at',
  '_rperm',
  '_wperm',
  '_tombstone',
  '_auth_data',
  'authData',
  '_acl',
  // The API form of a row's access list: who may read and write it, never an agent's business.
  'ACL',
  // Push device tokens (_Installation): addresses a device, so as secret as a session token.
  'deviceToken',
]);

export const INTERNAL_FIELD_PREFIXES: readonly string[] = ['_auth_data_'];

export function isInternalField(name: string): boolean {
  // Hot path (every key of every row): avoid allocating unless the name is dotted.
  const dot = name.indexOf('.');
  const root = dot === -1 ? name : name.slice(0, dot);
  if (INTERNAL_FIELDS.has(root)) return true;
  return (
    root.charCodeAt(0) === 95 /* _ */ && INTERNAL_FIELD_PREFIXES.some((p) => root.startsWith(p))
  );
}
