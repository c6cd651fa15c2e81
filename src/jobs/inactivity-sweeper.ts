// Ends sessions idle for the configured time (SPEC "Limits": 30 minutes without activity) with
// end_reason `inactivity`. Every node may run it: endSession locks the row and is idempotent, so two
// sweepers racing on one session end it once.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { endSession } from '../sessions/index.js';
import { findIdleSessions, type Db } from '../store/index.js';
import { startPeriodicSweep, type Sweeper } from './periodic-sweep.js';

export interface InactivitySweeperOptions {
  db: Db;
  redis: Redis;
  redisKeyPrefix: string;
  /** Idle time after which a session is ended (config.limits.inactivitySeconds). */
  inactivitySeconds: number;
  /** How often to look for idle sessions. */
  intervalMs: number;
  logger: Logger;
  /** Sessions ended per pass at most; the next pass takes the rest. */
  batchSize?: number;
}

export type InactivitySweeper = Sweeper;

export function startInactivitySweeper(opts: InactivitySweeperOptions): InactivitySweeper {
  const batch = opts.batchSize ?? 100;
  return startPeriodicSweep(
    opts.intervalMs,
    async (stopped) => {
      const ended: string[] = [];
      const ids = await findIdleSessions(opts.db, opts.inactivitySeconds, batch);
      for (const id of ids) {
        if (stopped()) break;
        const result = await endSession({ db: opts.db, redis: opts.redis, redisKeyPrefix: opts.redisKeyPrefix }, id, 'inactivity');
        if (result?.endedNow) ended.push(id);
      }
      if (ended.length) opts.logger.info({ count: ended.length, session_ids: ended }, 'ended idle sessions');
      return ended;
    },
    (err) => opts.logger.warn({ err }, 'inactivity sweep failed'),
  );
}
