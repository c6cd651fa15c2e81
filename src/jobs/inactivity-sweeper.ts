// Ends sessions idle for the configured time (SPEC "Limits": 30 minutes without activity) with
// end_reason `inactivity`, a pass's sessions in one transaction. Every node may run it: endSessions
// locks the rows and is idempotent, so two sweepers racing on one session end it once.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { endSessions } from '../sessions/index.js';
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
      const ids = await findIdleSessions(opts.db, opts.inactivitySeconds, batch);
      if (stopped() || ids.length === 0) return [];
      const results = await endSessions(
        { db: opts.db, redis: opts.redis, redisKeyPrefix: opts.redisKeyPrefix },
        ids.map((id) => ({ id, reason: 'inactivity' })),
      );
      const ended = [...results.values()].filter((r) => r.endedNow).map((r) => r.row.id);
      if (ended.length) opts.logger.info({ count: ended.length, session_ids: ended }, 'ended idle sessions');
      return ended;
    },
    (err) => opts.logger.warn({ err }, 'inactivity sweep failed'),
  );
}
