// Identifiers: prefix + 26-char time-ordered body (48-bit ms timestamp + 80 random bits, Crockford
// base32, like ULID), so `ORDER BY id` is creation order and cursors are plain ids.
import { randomBytes } from 'node:crypto';
import { pooledRandomBytes } from './random.js';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(acc >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

let lastMs = 0;
let seq = 0;

export type IdPrefix = 'org' | 'key' | 'sess' | 'rec' | 'anl' | 'agt' | 'kst' | 'wh' | 'evt' | 'pcon' | 'req' | 'call' | 'pn' | 'usr';

/** A new identifier such as `sess_01jd…`. Monotonic within one process. */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  seq = now === lastMs ? seq + 1 : 0;
  lastMs = now;
  // 16 random bits replaced by a per-ms counter keep ids ordered inside one millisecond.
  const rand = pooledRandomBytes(10);
  rand.writeUInt16BE(seq & 0xffff, 0);
  return `${prefix}_${encodeTime(now)}${encodeRandom(rand)}`;
}

/** An opaque secret token (stream tokens, API keys): prefix + 32 random base32 chars. */
export function newSecret(prefix: string): string {
  return `${prefix}${encodeRandom(randomBytes(20))}`;
}

/** The smallest id of this prefix created at or after `ms`: a lower bound for id-range scans by time. */
export function idFloor(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeTime(Math.max(0, Math.floor(ms)))}${'0'.repeat(16)}`;
}
