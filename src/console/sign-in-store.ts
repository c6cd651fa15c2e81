// Browser sign-ins in Redis: one record per signed-in browser (keyed by the SHA-256 of the cookie
// value, so a Redis dump holds no usable cookie), a set per user for "sign out everywhere", and
// the failed-sign-in counters that throttle and lock out guessing.
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ConsoleRole } from './users.js';

export interface SignIn {
  userId: string;
  orgId: string | null;
  role: ConsoleRole;
  email: string;
  /** Synchronizer token: every state-changing request must echo it in X-CSRF-Token. */
  csrf: string;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const sessionKey = (cookie: string) => `console:signin:${sha256(cookie)}`;
const userSetKey = (userId: string) => `console:user:${userId}:signins`;
const failKey = (who: string) => `console:signin-fail:${sha256(who.toLowerCase())}`;

export interface SignInLimits {
  ttlSeconds: number;
  maxFailures: number;
  lockoutSeconds: number;
}

export class SignInStore {
  constructor(
    private readonly redis: Redis,
    private readonly limits: SignInLimits,
  ) {}

  async create(fields: Omit<SignIn, 'csrf'>): Promise<{ cookie: string; signIn: SignIn }> {
    const cookie = randomBytes(32).toString('base64url');
    const signIn: SignIn = { ...fields, csrf: randomBytes(24).toString('base64url') };
    await this.redis
      .multi()
      .set(sessionKey(cookie), JSON.stringify(signIn), 'EX', this.limits.ttlSeconds)
      .sadd(userSetKey(fields.userId), sha256(cookie))
      .expire(userSetKey(fields.userId), this.limits.ttlSeconds)
      .exec();
    return { cookie, signIn };
  }

  /** The sign-in behind a cookie value, sliding its lifetime; null when unknown or expired. */
  async get(cookie: string): Promise<SignIn | null> {
    const key = sessionKey(cookie);
    const raw = await this.redis.get(key);
    if (!raw) return null;
    await this.redis.expire(key, this.limits.ttlSeconds);
    return JSON.parse(raw) as SignIn;
  }

  async end(cookie: string): Promise<void> {
    const signIn = await this.get(cookie);
    await this.redis.del(sessionKey(cookie));
    if (signIn) await this.redis.srem(userSetKey(signIn.userId), sha256(cookie));
  }

  /** Signs a user out of every browser. */
  async endAll(userId: string): Promise<number> {
    const hashes = await this.redis.smembers(userSetKey(userId));
    const keys = hashes.map((h) => `console:signin:${h}`);
    if (keys.length) await this.redis.del(...keys);
    await this.redis.del(userSetKey(userId));
    return keys.length;
  }

  /**
   * Seconds left on a lockout of this identity (email or client address); 0 when not locked.
   * `factor` scales the failure budget: an address (many users behind one NAT) gets more than an account.
   */
  async lockedFor(who: string, factor = 1): Promise<number> {
    const key = failKey(who);
    const count = Number((await this.redis.get(key)) ?? 0);
    if (count < this.limits.maxFailures * factor) return 0;
    return Math.max(1, await this.redis.ttl(key));
  }

  /** Counts a failure; the window restarts with each failure, so guessing keeps the lock on. */
  async recordFailure(who: string): Promise<void> {
    await this.redis.multi().incr(failKey(who)).expire(failKey(who), this.limits.lockoutSeconds).exec();
  }

  async clearFailures(who: string): Promise<void> {
    await this.redis.del(failKey(who));
  }
}
