// Per-key fixed-window rate limiting in Redis, shared by every node. The window and quota come
// from the organization's plan (SPEC.md "Limits": quotas per plan, reported by X-RateLimit-*).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors.js';
import type { ApiDeps } from '../context.js';

// INCR the window counter and set its expiry on first use, atomically.
const WINDOW_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

type WindowCommand = (key: string, windowMs: number) => Promise<number>;

async function rateLimitPlugin(app: FastifyInstance, deps: ApiDeps): Promise<void> {
  // A defined command runs by EVALSHA: the script body is sent once per connection, not per request.
  if (!(deps.redis as unknown as { vbRateWindow?: WindowCommand }).vbRateWindow) {
    deps.redis.defineCommand('vbRateWindow', { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  }
  const incrWindow = (key: string, windowMs: number): Promise<number> => (deps.redis as unknown as { vbRateWindow: WindowCommand }).vbRateWindow(key, windowMs);
  app.addHook('onRequest', async (req, reply) => {
    const auth = req.auth;
    if (!auth) return;
    const windowMs = auth.org.rate_window_seconds * 1000;
    const windowStart = Math.floor(Date.now() / windowMs) * windowMs;
    const resetAt = Math.ceil((windowStart + windowMs) / 1000);
    const count = Number(await incrWindow(`rl:${auth.keyId}:${windowStart}`, windowMs + 1000));
    const limit = auth.org.rate_limit;
    reply.header('X-RateLimit-Limit', limit);
    reply.header('X-RateLimit-Remaining', Math.max(0, limit - count));
    reply.header('X-RateLimit-Reset', resetAt);
    if (count > limit) {
      const retryAfter = Math.max(1, resetAt - Math.floor(Date.now() / 1000));
      throw new ApiError('rate_limit_exceeded', {
        retryAfter,
        message: `Rate limit of ${limit} requests per ${auth.org.rate_window_seconds} s exceeded; retry after ${retryAfter} s.`,
      });
    }
  });
}

export default fp(rateLimitPlugin, { name: 'voxbridge-rate-limit', dependencies: ['voxbridge-auth'] });
