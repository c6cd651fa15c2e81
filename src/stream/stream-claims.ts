// One stream per session across every node (SPEC close code 4009): a connected socket holds
// `stream:<session id>` in Redis with a short TTL that the server refreshes while it is connected,
// so a node that dies frees its claims within the TTL. Also the per-session connect counter
// behind close code 4029.
import type { Redis } from 'ioredis';

export const CLAIM_TTL_MS = 30_000;

const claimKey = (sessionId: string): string => `stream:${sessionId}`;

// Refresh and release only the holder's own claim (compare-and-act, atomic in Redis).
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** True when `holder` now holds the session's stream claim. */
export async function claimStream(redis: Redis, sessionId: string, holder: string): Promise<boolean> {
  return (await redis.set(claimKey(sessionId), holder, 'PX', CLAIM_TTL_MS, 'NX')) === 'OK';
}

// All of a node's claims refreshed in one script call (KEYS[i] held by ARGV[i + 1]).
const REFRESH_MANY = `local n = 0
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then redis.call('PEXPIRE', key, ARGV[1]); n = n + 1 end
end
return n`;

/** Refreshes this node's claims in batches of 500 keys (one round trip each); returns how many it still holds. */
export async function refreshStreamClaims(redis: Redis, claims: Array<[sessionId: string, holder: string]>): Promise<number> {
  let held = 0;
  for (let i = 0; i < claims.length; i += 500) {
    const batch = claims.slice(i, i + 500);
    held += (await redis.eval(REFRESH_MANY, batch.length, ...batch.map(([id]) => claimKey(id)), CLAIM_TTL_MS, ...batch.map(([, h]) => h))) as number;
  }
  return held;
}

// Replace the claim only if `stale` still holds it (compare-and-set).
const REPLACE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]); return 1 else return 0 end`;

/** The current holder of the session's stream claim (`<node id>:<uuid>`), or null. */
export async function streamHolder(redis: Redis, sessionId: string): Promise<string | null> {
  return redis.get(claimKey(sessionId));
}

/** Takes the claim over from `stale` (a holder on a node that lost the session); true on success. */
export async function replaceStream(redis: Redis, sessionId: string, stale: string, holder: string): Promise<boolean> {
  return (await redis.eval(REPLACE, 1, claimKey(sessionId), stale, holder, CLAIM_TTL_MS)) === 1;
}

export async function releaseStream(redis: Redis, sessionId: string, holder: string): Promise<void> {
  await redis.eval(RELEASE, 1, claimKey(sessionId), holder);
}

/**
 * Counts a connect to a session in the current one-minute window; true when it is within `limit`.
 * Counted per session, after the token is verified: a reconnect loop is the flood that matters, and
 * counting unauthenticated attempts would let anyone who knows an id lock its owner out.
 */
export async function allowConnect(redis: Redis, sessionId: string, limit: number): Promise<boolean> {
  const key = `stream-connects:${sessionId}:${Math.floor(Date.now() / 60_000)}`;
  const [[, count]] = (await redis.multi().incr(key).expire(key, 120).exec()) as [[Error | null, number]];
  return count <= limit;
}
