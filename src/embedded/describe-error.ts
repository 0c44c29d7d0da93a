/** Some dependencies reject with non-Error values (or nothing): never print "undefined". */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (error === undefined || error === null) return 'an unknown error (no details were given)';
  return typeof error === 'string' ? error : JSON.stringify(error);
}
