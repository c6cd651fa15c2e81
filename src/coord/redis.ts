import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** A Redis client whose every key carries `prefix` (one deployment, or one test, per prefix). */
export function createRedis(url: string, prefix: string, logger?: Logger): Redis {
  const redis = new Redis(url, { keyPrefix: prefix, maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false, enableAutoPipelining: true });
  redis.on('error', (err) => logger?.warn({ err: err.message }, 'redis error'));
  return redis;
}
