// Random bytes for identifiers, SIP tags and Call-IDs, taken from a pooled CSPRNG buffer. Several are
// made per call setup, and a small `crypto.randomBytes` costs a native call and a Buffer each; Node's
// own randomUUID pools its entropy the same way. Secrets (API keys, cookies) keep calling randomBytes.
import { randomFillSync } from 'node:crypto';

const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let offset = POOL_SIZE;

/** `n` (≤ 4096) fresh random bytes, copied out of the pool. */
export function pooledRandomBytes(n: number): Buffer {
  if (n > POOL_SIZE) throw new RangeError(`pooledRandomBytes: ${n} > ${POOL_SIZE}`);
  if (offset + n > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = Buffer.from(pool.subarray(offset, offset + n));
  offset += n;
  return out;
}
