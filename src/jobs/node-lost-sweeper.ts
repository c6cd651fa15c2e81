// Ends the sessions of a node that died (DESIGN.md "Scale-out"). A live session's owner refreshes
// its claim (`owner:<id>`, coord/ownership.ts) every third of the claim TTL; a node that stops
// without closing stops refreshing. Once a claim has gone unrefreshed for the TTL plus the reconnect
// grace and nobody holds it (a socket or leg that reconnected to a surviving node took it over),
// the session is ended with end_reason `node_lost`. Sessions never opened live were never claimed
// and are left to the inactivity sweeper. A pass's lost sessions end in one transaction. Every worker
// may run it: endSessions is idempotent.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { endSessions } from '../sessions/index.js';
import { claimsNotRefreshedSince, forgetClaimHistory, ownerOf } from '../coord/index.js';
import type { Db } from '../store/index.js';
import { startPeriodicSweep, type Sweeper } from './periodic-sweep.js';

export interface NodeLostSweeperOptions {
  db: Db;
  redis: Redis;
  redisKeyPrefix: string;
  logger: Logger;
  /** Owner claim TTL (config.limits.ownerClaimTtlSeconds). */
  claimTtlMs: number;
  /** Time a surviving node is given to take the session over (config.limits.reconnectGraceSeconds). */
  graceMs: number;
  intervalMs: number;
  batchSize?: number;
}

export type NodeLostSweeper = Sweeper;

export function startNodeLostSweeper(opts: NodeLostSweeperOptions): NodeLostSweeper {
  const batch = opts.batchSize ?? 100;
  const log = opts.logger.child({ component: 'node-lost-sweeper' });
  return startPeriodicSweep(
    opts.intervalMs,
    async (stopped) => {
      const lost: string[] = [];
      for (const id of await claimsNotRefreshedSince(opts.redis, Date.now() - opts.claimTtlMs - opts.graceMs, batch)) {
        if (stopped()) break;
        if (!(await ownerOf(opts.redis, id))) lost.push(id); // else taken over; its owner refreshes the history
      }
      const results = await endSessions(
        { db: opts.db, redis: opts.redis, redisKeyPrefix: opts.redisKeyPrefix },
        lost.map((id) => ({ id, reason: 'node_lost' })),
      );
      await forgetClaimHistory(opts.redis, lost);
      const ended = [...results.values()].filter((r) => r.endedNow).map((r) => r.row.id);
      if (ended.length) log.warn({ count: ended.length, session_ids: ended }, 'ended sessions of a lost node');
      return ended;
    },
    (err) => log.warn({ err }, 'node-lost sweep failed'),
  );
}
