// Stream tokens (SPEC "Stream token (WebSocket)"): opaque kst_… secrets that let a browser or app open
// one session's socket without the API key. Redis holds token → session id with the token's TTL,
// so expiry is Redis's job and every node can verify a token at connect.
import type { Redis } from 'ioredis';
import { newSecret } from '../ids.js';

const keyOf = (token: string): string => `stoken:${token}`;
const TOKEN_PATTERN = /^kst_[0-9a-z]{32}$/;

export interface IssuedStreamToken {
  token: string;
  /** Issue time + ttl. */
  expiresAt: Date;
}

export async function issueStreamToken(redis: Redis, sessionId: string, ttlSeconds: number): Promise<IssuedStreamToken> {
  const token = newSecret('kst_');
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await redis.set(keyOf(token), sessionId, 'EX', ttlSeconds);
  return { token, expiresAt };
}

/** The session id the token was issued for, or null when it is malformed, unknown or expired. */
export async function resolveStreamToken(redis: Redis, token: string): Promise<string | null> {
  if (!TOKEN_PATTERN.test(token)) return null;
  return redis.get(keyOf(token));
}

/** Withdraws a token (e.g. the session could not be created); idempotent. */
export async function revokeStreamToken(redis: Redis, token: string): Promise<void> {
  await redis.del(keyOf(token));
}
