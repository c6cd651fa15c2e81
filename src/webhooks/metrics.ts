// Prometheus metrics of webhook delivery: attempts by outcome and delivery delay counted
// as they happen; retry queue depth and the oldest undelivered event's age read from PostgreSQL at
// scrape time (they describe the shared queue, the same from every node).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DeliveryQueueStats } from '../store/index.js';

export type AttemptOutcome = 'delivered' | 'retry' | 'failed';

export interface WebhookMetrics {
  attempt(outcome: AttemptOutcome): void;
  /** Seconds from the event's outbox write to its successful delivery. */
  delivered(delaySeconds: number): void;
  /** One fan-out of new outbox events into deliveries. */
  fanOut(): void;
}

const NAMES = [
  'voxbridge_webhook_deliveries_total',
  'voxbridge_webhook_fan_outs_total',
  'voxbridge_webhook_delivery_delay_seconds',
  'voxbridge_webhook_retry_queue_depth',
  'voxbridge_webhook_oldest_undelivered_event_age_seconds',
];

/** Registers the metrics, replacing those of a previous worker in this process (restart, tests). */
export function registerWebhookMetrics(registry: Registry, stats: () => Promise<DeliveryQueueStats>): WebhookMetrics {
  for (const name of NAMES) registry.removeSingleMetric(name);
  const attempts = new Counter({
    name: 'voxbridge_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered (2xx in time), retry (failed, will be retried), failed (failed, schedule exhausted)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const fanOuts = new Counter({
    name: 'voxbridge_webhook_fan_outs_total',
    help: 'Fan-outs of new outbox events into deliveries; the events of a burst share one (webhooks.fanOutIntervalMs)',
    registers: [registry],
  });
  const delay = new Histogram({
    name: 'voxbridge_webhook_delivery_delay_seconds',
    help: 'Time from the outbox write of an event to its successful delivery',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30, 300, 3600],
    registers: [registry],
  });
  let last: Promise<DeliveryQueueStats> | null = null;
  // Both gauges are filled from one query per scrape.
  const read = () => (last ??= stats().finally(() => setImmediate(() => (last = null))));
  new Gauge({
    name: 'voxbridge_webhook_retry_queue_depth',
    help: 'Pending webhook deliveries that failed at least once and wait for a retry',
    registers: [registry],
    async collect() {
      this.set((await read()).retryQueueDepth);
    },
  });
  new Gauge({
    name: 'voxbridge_webhook_oldest_undelivered_event_age_seconds',
    help: 'Age of the oldest event not yet delivered to an enabled endpoint (0 when none)',
    registers: [registry],
    async collect() {
      this.set((await read()).oldestUndeliveredSeconds);
    },
  });
  for (const outcome of ['delivered', 'retry', 'failed'] as const) attempts.inc({ outcome }, 0);
  return {
    attempt: (outcome) => attempts.inc({ outcome }),
    delivered: (s) => delay.observe(s),
    fanOut: () => fanOuts.inc(),
  };
}

export const noWebhookMetrics: WebhookMetrics = { attempt: () => undefined, delivered: () => undefined, fanOut: () => undefined };
