// Retention of SIP capture (README "SIP capture"): messages captured more than
// config.sipCapture.retentionHours ago (default 24) are deleted in batches by every worker node
// (the deletes are idempotent).
import type { Logger } from 'pino';
import { purgeSipMessages, type Db } from '../store/index.js';
import { startPeriodicSweep, type Sweeper } from './periodic-sweep.js';

export interface SipCaptureRetentionOptions {
  db: Db;
  logger: Logger;
  retentionHours: number;
  intervalMs?: number;
  batchSize?: number;
}

/** Sweeps once per interval (default every 10 minutes); one pass deletes until a batch comes back short. */
export function startSipCaptureRetention(o: SipCaptureRetentionOptions): Sweeper {
  const batch = o.batchSize ?? 5000;
  return startPeriodicSweep(
    o.intervalMs ?? 600_000,
    async (stopped) => {
      let total = 0;
      for (;;) {
        if (stopped()) break;
        const n = await purgeSipMessages(o.db, o.retentionHours, batch);
        total += n;
        if (n < batch) break;
      }
      if (total > 0) o.logger.info({ deleted: total }, 'SIP capture past retention deleted');
      return [];
    },
    (err) => o.logger.warn({ err }, 'SIP capture retention sweep failed'),
  );
}
