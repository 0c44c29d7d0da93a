/**
 * Parse's own classes that no agent sees, whatever its identity (the master key included), unless
 * the application unhides one by name: sessions, config values, webhook definitions with their
 * URLs, the schema table, device tokens, push and job bookkeeping.
 */
export const BUILTIN_HIDDEN_CLASSES = [
  '_Session',
  '_Product',
  '_JobStatus',
  '_JobSchedule',
  '_GlobalConfig',
  '_GraphQLConfig',
  '_Hooks',
  '_SCHEMA',
  '_Installation',
  '_PushStatus',
  '_Idempotency',
  '_Audience',
] as const;

/** What happens to classes on the server that no registered model declares. */
export type UnregisteredClassPolicy = 'hidden' | 'visible';
