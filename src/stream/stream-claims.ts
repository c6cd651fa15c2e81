// One stream per session across every node (SPEC close code 4009): a connected socket holds
// `stream:<session id>` in Redis with a short TTL that the server refreshes while it is connected,
// so a node that dies frees its claims within the TTL. Also the per-session connect counter
// behind close code 4029.
import type { Redis } from 'ioredis';

export const CLAIM_TTL_MS = 30_000;

const claimKey = (sessionId: string): string => `stream:${sessionId}`;

// Refresh and release only the holder's own claim (compare-and-act, atomic in Redis).
const REFRESH = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** True when `holder` now holds the session's stream claim. */
export async function claimStream(redis: Redis, sessionId: string, holder: string): Promise<boolean> {
  return (await redis.set(claimKey(sessionId), holder, 'PX', CLAIM_TTL_MS, 'NX')) === 'OK';
}

export async function refreshStreamClaims(redis: Redis, claims: Iterable<[sessionId: string, holder: string]>): Promise<void> {
  const pipe = redis.pipeline();
  let n = 0;
  for (const [sessionId, holder] of claims) {
    pipe.eval(REFRESH, 1, claimKey(sessionId), holder, CLAIM_TTL_MS);
    n++;
  }
  if (n) await pipe.exec();
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
