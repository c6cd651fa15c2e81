// Retention of webhook history (README "Webhooks"): attempt logs, finished deliveries and dispatched
// events older than config.webhooks.retentionDays (default 30) are deleted, in batches, by every
// worker node (the deletes are idempotent). Pending deliveries and their events are never touched.
import type { Logger } from 'pino';
import { purgeDeliveryHistory, type Db } from '../store/index.js';
import { startPeriodicSweep, type Sweeper } from './periodic-sweep.js';

export interface WebhookRetentionOptions {
  db: Db;
  logger: Logger;
  retentionDays: number;
  intervalMs?: number;
  batchSize?: number;
}

/** Sweeps once per interval (default hourly); one pass deletes until a batch comes back short. */
export function startWebhookRetention(o: WebhookRetentionOptions): Sweeper {
  const batch = o.batchSize ?? 5000;
  return startPeriodicSweep(
    o.intervalMs ?? 3_600_000,
    async (stopped) => {
      const total = { attempts: 0, deliveries: 0, events: 0 };
      for (;;) {
        if (stopped()) break;
        const n = await purgeDeliveryHistory(o.db, o.retentionDays, batch);
        total.attempts += n.attempts;
        total.deliveries += n.deliveries;
        total.events += n.events;
        if (n.attempts < batch && n.deliveries < batch && n.events < batch) break;
      }
      if (total.attempts + total.deliveries + total.events > 0) o.logger.info(total, 'webhook history past retention deleted');
      return [];
    },
    (err) => o.logger.warn({ err }, 'webhook retention sweep failed'),
  );
}
