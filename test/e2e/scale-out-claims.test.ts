// Owner claims in real Redis (coord/ownership.ts): one owner per session, a restarted process with
// the same node id takes its own claims back, refresh re-takes an expired claim but never another
// node's, release leaves another node's claim alone, and the claim history finds stale owners.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedis } from '../../src/coord/redis.js';
import { SessionOwnership, ownerOf, claimsNotRefreshedSince, forgetClaimHistory } from '../../src/coord/ownership.js';
import { TEST_REDIS_URL, uniqueName } from '../helpers/gateway.js';

let redis: Redis;
let prefix: string;
beforeAll(() => {
  prefix = `${uniqueName('claims')}:`;
  redis = createRedis(TEST_REDIS_URL, prefix);
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys.map((k) => k.slice(prefix.length)));
  redis.disconnect();
});

const node = (id: string, ttlMs = 60_000) => new SessionOwnership(redis, { node: id, url: `http://${id}.example` }, ttlMs);

describe('owner claims', () => {
  it('gives a session one owner and tells the others who it is', async () => {
    const a = node('a');
    a.setSip({ address: '10.0.0.1', port: 5070 });
    const b = node('b');
    expect(await a.take('s1')).toBeNull();
    expect(await b.take('s1')).toEqual({ node: 'a', url: 'http://a.example', sip: { address: '10.0.0.1', port: 5070 } });
    expect(await ownerOf(redis, 's1')).toMatchObject({ node: 'a' });
    // The same node id (a restarted process) takes its claim back.
    expect(await node('a').take('s1')).toBeNull();
    // Release by another node leaves the claim; the owner's own release frees it.
    await b.release('s1');
    expect(await ownerOf(redis, 's1')).toMatchObject({ node: 'a' });
    await a.release('s1');
    expect(await ownerOf(redis, 's1')).toBeNull();
    expect(await b.take('s1')).toBeNull();
    await b.release('s1');
  });

  it('refreshes its own claims, re-takes an expired one and reports the ones another node took', async () => {
    const a = node('a', 60_000);
    const b = node('b');
    await a.take('r1');
    await a.take('r2');
    await a.take('r3');
    await redis.del('owner:r2'); // expired meanwhile, nobody took it
    await redis.del('owner:r3');
    expect(await b.take('r3')).toBeNull(); // another node took it
    expect(await a.refresh(['r1', 'r2', 'r3'])).toEqual(['r3']);
    expect((await ownerOf(redis, 'r2'))?.node).toBe('a');
    expect((await ownerOf(redis, 'r3'))?.node).toBe('b');
    expect(await redis.pttl('owner:r1')).toBeGreaterThan(50_000);
    for (const id of ['r1', 'r2']) await a.release(id);
    await b.release('r3');
  });

  it('remembers when each claim was last refreshed, so stale owners can be found', async () => {
    const a = node('a');
    const before = Date.now();
    await a.take('h1');
    expect(await claimsNotRefreshedSince(redis, before - 1, 10)).not.toContain('h1');
    expect(await claimsNotRefreshedSince(redis, Date.now() + 1, 10)).toContain('h1');
    await forgetClaimHistory(redis, ['h1']);
    expect(await claimsNotRefreshedSince(redis, Date.now() + 1, 10)).not.toContain('h1');
    await a.refresh(['h1']);
    expect(await claimsNotRefreshedSince(redis, Date.now() + 1, 10)).toContain('h1');
    await a.release('h1'); // released: forgotten too
    expect(await claimsNotRefreshedSince(redis, Date.now() + 1, 10)).not.toContain('h1');
  });
});
