import { ParseRequestError } from '../../core/errors';

/** Parse's code for "object not found", which it also answers for a write the row's ACL refuses. */
const OBJECT_NOT_FOUND = 101;

/**
 * Runs a write on an object this agent has just read. Parse answers a write that the row's ACL (or
 * the class's CLP) refuses with "Object not found", which reads as a missing row right after a read
 * or a dry run found it: the error is re-told as a likely missing write permission. Other errors
 * pass unchanged.
 */
export async function writeToReadableObject<T>(
  className: string,
  objectId: string,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof ParseRequestError) || error.parseCode !== OBJECT_NOT_FOUND) throw error;
    throw new ParseRequestError(
      `Parse error: Object not found: ${className}#${objectId} when writing it, although this agent can read it: the user may lack write access to this object (its ACL or the class's permissions refuse the write, and Parse reports that as "not found"). A dry run checks only what the user can read, not write permission. Ask someone with write access, or change the object's ACL.`,
      error.parseCode,
      error.status,
    );
  }
}
