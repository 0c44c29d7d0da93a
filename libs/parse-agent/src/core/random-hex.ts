import { randomFillSync } from 'node:crypto';

const POOL = Buffer.allocUnsafe(4096);
let offset = POOL.length;

/**
 * `bytes` bytes from the CSPRNG as hex, drawn from a pool refilled 4 KiB at a time: a call per
 * response (the untrusted-data delimiter) would otherwise pay one `randomBytes` call into OpenSSL
 * each. Every byte is used once.
 */
export function randomHex(bytes: number): string {
  if (bytes > POOL.length) return randomFillSync(Buffer.alloc(bytes)).toString('hex');
  if (offset + bytes > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const hex = POOL.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
