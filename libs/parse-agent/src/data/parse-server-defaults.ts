/**
 * Parse Server's default for its `protectedFields` option, which the direct database paths merge
 * into each class's CLP when the operator does not pass the server's own setting.
 */
export const PARSE_DEFAULT_PROTECTED_FIELDS: Readonly<
  Record<string, Readonly<Record<string, readonly string[]>>>
> = Object.freeze({ _User: Object.freeze({ '*': Object.freeze(['email']) }) });
