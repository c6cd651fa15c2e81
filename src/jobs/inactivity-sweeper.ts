// Ends sessions idle for the configured time (SPEC "Limits": 30 minutes without activity) with
// end_reason `inactivity`. Every node may run it: endSession locks the row and is idempotent, so two
// sweepers racing on one session end it once.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { endSession } from '../sessions/lifecycle.js';
import { findIdleSessions, type Db } from '../store/index.js';

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

export interface InactivitySweeper {
  /** Runs one pass now; resolves with the ids it ended. */
  sweep(): Promise<string[]>;
  /** Stops the timer and waits for a pass in progress; idempotent. */
  stop(): Promise<void>;
}

export function startInactivitySweeper(opts: InactivitySweeperOptions): InactivitySweeper {
  const batch = opts.batchSize ?? 100;
  let running: Promise<string[]> | null = null;
  let stopped = false;

  const pass = async (): Promise<string[]> => {
    const ended: string[] = [];
    const ids = await findIdleSessions(opts.db, opts.inactivitySeconds, batch);
    for (const id of ids) {
      if (stopped) break;
      const result = await endSession({ db: opts.db, redis: opts.redis, redisKeyPrefix: opts.redisKeyPrefix }, id, 'inactivity');
      if (result?.endedNow) ended.push(id);
    }
    if (ended.length) opts.logger.info({ count: ended.length, session_ids: ended }, 'ended idle sessions');
    return ended;
  };

  const sweep = (): Promise<string[]> => {
    // One pass at a time per process; a caller asking during a pass shares it.
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  };

  const timer = setInterval(() => {
    sweep().catch((err) => opts.logger.warn({ err }, 'inactivity sweep failed'));
  }, opts.intervalMs);
  timer.unref();

  return {
    sweep,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
