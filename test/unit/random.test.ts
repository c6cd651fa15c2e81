import { describe, expect, it } from 'vitest';
import { pooledRandomBytes } from '../../src/random.js';

describe('pooledRandomBytes', () => {
  it('hands out fresh, independent bytes across pool refills', () => {
    const seen = new Set<string>();
    // 3 × 4096 bytes: the pool refills twice, and no 16-byte draw repeats.
    for (let i = 0; i < 768; i++) seen.add(pooledRandomBytes(16).toString('hex'));
    expect(seen.size).toBe(768);
    const a = pooledRandomBytes(8);
    const copy = Buffer.from(a);
    pooledRandomBytes(4096); // a refill must not change bytes already handed out
    expect(a.equals(copy)).toBe(true);
  });

  it('refuses more than a pool', () => {
    expect(() => pooledRandomBytes(4097)).toThrow(RangeError);
  });
});
