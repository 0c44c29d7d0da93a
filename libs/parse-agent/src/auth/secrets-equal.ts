import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Compares a presented secret with the expected one in constant time. Both are hashed first, so
 * the comparison takes the same time whatever the lengths and wherever they first differ; an empty
 * expected secret matches nothing.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  if (typeof presented !== 'string' || typeof expected !== 'string' || !expected) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}
