// Webhook delivery worker (runs with the `worker` role). A loop, woken by LISTEN/NOTIFY when
// an event is committed (trigger in migration 004), by finished attempts and by a safety-net poll:
//   1. fan out undispatched outbox events into per-endpoint deliveries;
//   2. claim due deliveries (SKIP LOCKED, per-endpoint bound, per-session order; see the repo);
//   3. send each: URL re-checked and the checked address pinned, envelope signed with every active
//      secret; 2xx within the deadline is delivered, anything else is retried on the schedule;
//   4. record attempts in batches and keep each endpoint's failure clock (3 days → disabled).
// A node that dies mid-attempt leaves its claims to expire; another node then sends again (at least
// once; receivers dedupe on the event id).
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import {
  claimDueDeliveries,
  fanOutEvents,
  recordAttempts,
  updateEndpointHealth,
  webhookEndpointsByIds,
  type AttemptResult,
  type ClaimedDelivery,
  type Db,
  type WebhookEndpointRow,
} from '../store/index.js';
import {
  deliveryHeaders,
  envelopeBody,
  noWebhookMetrics,
  openSecret,
  resolveEndpointUrl,
  retryDelayMs,
  urlPolicyOf,
  UrlRefused,
  WebhookHttpSender,
  type WebhookMetrics,
} from '../webhooks/index.js';

export interface WebhookDeliveryOptions {
  db: Db;
  config: Pick<Config, 'databaseUrl' | 'databaseSchema' | 'secretKey' | 'webhooks'>;
  logger: Logger;
  metrics?: WebhookMetrics;
  /** Attempts in flight on this node at most. */
  maxInFlight?: number;
  /** Events fanned out per statement. */
  fanOutBatch?: number;
}

const SHUTDOWN_WAIT_MS = 5000;

export class WebhookDeliveryWorker {
  private readonly sender = new WebhookHttpSender();
  private readonly metrics: WebhookMetrics;
  private readonly maxInFlight: number;
  private readonly fanOutBatch: number;
  private readonly sends = new Set<Promise<void>>();
  private readonly secrets = new Map<string, string>();
  private results: AttemptResult[] = [];
  private health = { ok: new Set<string>(), failed: new Set<string>() };
  private flushing: Promise<void> | null = null;
  private loop: Promise<void> | null = null;
  /** Set by finishing sends, retries falling due, fan-outs that made deliveries and the poll: claim due deliveries. */
  private claimRequested = false;
  /** Set by NOTIFY and the poll: fan new events out into deliveries. */
  private fanOutRequested = false;
  private stopped = false;
  private poll?: NodeJS.Timeout;
  /** A fan-out asked for sooner than fanOutIntervalMs after the last one waits for this timer. */
  private fanOutTimer?: NodeJS.Timeout;
  private lastFanOutAt = -Infinity;
  private retryTimer?: NodeJS.Timeout;
  private retryAt = Infinity;
  private listener?: pg.Client;
  private relisten?: NodeJS.Timeout;

  constructor(private readonly o: WebhookDeliveryOptions) {
    this.metrics = o.metrics ?? noWebhookMetrics;
    this.maxInFlight = o.maxInFlight ?? 256;
    this.fanOutBatch = o.fanOutBatch ?? 500;
  }

  private get settings() {
    return this.o.config.webhooks;
  }

  async start(): Promise<void> {
    await this.listen();
    this.poll = setInterval(() => this.wakeForAll(), this.settings.pollIntervalMs);
    this.poll.unref();
    this.wakeForAll();
  }

  /** Subscribes to the schema's notification channel; on a lost connection, retries every second (the poll covers the gap). */
  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({ connectionString: this.o.config.databaseUrl, options: `-c search_path=${this.o.config.databaseSchema}` });
    client.on('notification', () => this.wakeForOutbox());
    client.on('error', (err) => {
      this.o.logger.warn({ err }, 'webhook listener connection lost');
      client.end().catch(() => undefined);
      if (this.listener === client) this.listener = undefined;
      if (!this.stopped) this.relisten = setTimeout(() => void this.listen().catch(() => undefined), 1000);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "webhooks_${this.o.config.databaseSchema}"`);
      this.listener = client;
    } catch (err) {
      this.o.logger.warn({ err }, 'webhook listener could not connect; polling meanwhile');
      client.end().catch(() => undefined);
      if (!this.stopped) this.relisten = setTimeout(() => void this.listen().catch(() => undefined), 1000);
    }
  }

  /** A claim of due deliveries (a send finished, a retry fell due). */
  wake(): void {
    this.claimRequested = true;
    this.kick();
  }

  /**
   * A fan-out of new events (NOTIFY), at most one per `fanOutIntervalMs`: every committed event NOTIFYs,
   * and a burst of them (calls set up or hung up together, a few events each) would otherwise cost a
   * fan-out each, four statements on the pool the calls' own writes use. The interval's events share
   * the next one. Claims are not held back: a finished send frees a place at once.
   */
  private wakeForOutbox(): void {
    this.fanOutRequested = true;
    this.kick();
  }

  private wakeForAll(): void {
    this.claimRequested = this.fanOutRequested = true;
    this.kick();
  }

  private fanOutDue(): boolean {
    return this.fanOutRequested && performance.now() - this.lastFanOutAt >= this.settings.fanOutIntervalMs;
  }

  /** Starts a pass for what was asked, unless one runs (it looks again when it ends); passes never overlap. */
  private kick(): void {
    if (this.loop || this.stopped) return;
    if (!this.claimRequested && !this.fanOutDue()) {
      if (this.fanOutRequested && !this.fanOutTimer) {
        this.fanOutTimer = setTimeout(
          () => {
            this.fanOutTimer = undefined;
            this.kick();
          },
          this.lastFanOutAt + this.settings.fanOutIntervalMs - performance.now(),
        );
      }
      return;
    }
    this.loop = this.run()
      .catch((err) => {
        // After a failure (database unreachable…) the next poll tries again, not a tight loop.
        this.claimRequested = this.fanOutRequested = false;
        this.o.logger.warn({ err }, 'webhook delivery pass failed');
      })
      .finally(() => {
        this.loop = null;
        // What was asked for during the pass is not lost: it starts the next one (or waits for its time).
        this.kick();
      });
  }

  /** Fan-outs and claims until nothing asked for is due; full batches go again at once (a backlog drains). */
  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.fanOutDue()) {
        this.fanOutRequested = false;
        this.lastFanOutAt = performance.now();
        this.metrics.fanOut();
        const fanned = await fanOutEvents(this.o.db, this.fanOutBatch);
        if (fanned === this.fanOutBatch) {
          this.fanOutRequested = true;
          this.lastFanOutAt = -Infinity;
        }
        if (fanned > 0) this.claimRequested = true;
      }
      if (!this.claimRequested) return;
      this.claimRequested = false;
      const room = this.maxInFlight - this.sends.size;
      if (room <= 0) return; // a finishing send asks again
      const limit = Math.min(room, 200);
      const claimed = await claimDueDeliveries(this.o.db, {
        limit,
        perEndpoint: this.settings.endpointConcurrency,
        leaseMs: this.settings.timeoutMs + 15_000,
      });
      if (claimed.length === limit) this.claimRequested = true;
      if (claimed.length) await this.startSends(claimed);
    }
  }

  private async startSends(claimed: ClaimedDelivery[]): Promise<void> {
    const endpoints = new Map((await webhookEndpointsByIds(this.o.db, [...new Set(claimed.map((c) => c.endpoint_id))])).map((e) => [e.id, e]));
    for (const d of claimed) {
      const endpoint = endpoints.get(d.endpoint_id);
      if (!endpoint) continue; // deleted meanwhile: its deliveries went with it
      const send = this.sendOne(d, endpoint).catch((err) => this.o.logger.error({ err, delivery: d.id }, 'webhook send failed unexpectedly'));
      this.sends.add(send);
      void send.finally(() => {
        this.sends.delete(send);
        this.wake();
      });
    }
  }

  private secretsOf(e: WebhookEndpointRow, now: number): string[] {
    const open = (sealed: string) => {
      let plain = this.secrets.get(sealed);
      if (plain === undefined) {
        plain = openSecret(this.o.config.secretKey, sealed);
        if (this.secrets.size > 10_000) this.secrets.clear();
        this.secrets.set(sealed, plain);
      }
      return plain;
    };
    const out = [open(e.secret_enc)];
    if (e.previous_secret_enc && e.previous_secret_expires_at && e.previous_secret_expires_at.getTime() > now) out.push(open(e.previous_secret_enc));
    return out;
  }

  private async sendOne(d: ClaimedDelivery, endpoint: WebhookEndpointRow): Promise<void> {
    const attemptedAt = new Date();
    let ok = false;
    let statusCode: number | null = null;
    let error: string | null = null;
    let durationMs = 0;
    let response: Pick<AttemptResult, 'responseHeaders' | 'responseBody'> = {};
    try {
      // Checked again at every attempt (DNS can change); the request connects to this very address.
      const target = await resolveEndpointUrl(endpoint.url, urlPolicyOf(this.settings));
      const body = envelopeBody(d);
      const r = await this.sender.send(target, body, deliveryHeaders(d, body, this.secretsOf(endpoint, Date.now())), this.settings.timeoutMs);
      ({ ok, statusCode, error, durationMs } = r);
      response = { responseHeaders: r.responseHeaders ?? null, responseBody: r.responseBody ?? null };
    } catch (err) {
      error = err instanceof UrlRefused ? `refused: ${err.message}` : `error: ${(err as Error).message}`;
      durationMs = Date.now() - attemptedAt.getTime();
    }
    const failedAttempts = d.attempts + 1;
    const delay = ok ? null : retryDelayMs(this.settings.retryScheduleSeconds, failedAttempts);
    const outcome = ok ? 'delivered' : delay === null ? 'failed' : 'retry';
    const nextRetryAt = delay === null ? null : new Date(Date.now() + delay);
    this.metrics.attempt(outcome);
    if (ok) {
      this.metrics.delivered((Date.now() - d.event_created_at.getTime()) / 1000);
      // Only an endpoint whose failure clock runs needs it stopped (saves a write per batch when healthy).
      if (endpoint.failing_since) this.health.ok.add(endpoint.id);
    } else {
      this.health.failed.add(endpoint.id);
      if (nextRetryAt) this.wakeAt(nextRetryAt.getTime());
    }
    this.results.push({ deliveryId: d.id, outcome, statusCode, error, durationMs, attemptedAt, nextRetryAt, ...response });
    await this.flush();
  }

  /** Retries due before the next poll get their own wake-up. */
  private wakeAt(at: number): void {
    if (at >= this.retryAt || at - Date.now() >= this.settings.pollIntervalMs) return;
    clearTimeout(this.retryTimer);
    this.retryAt = at;
    this.retryTimer = setTimeout(
      () => {
        this.retryAt = Infinity;
        this.wake();
      },
      Math.max(0, at - Date.now()) + 5,
    );
    this.retryTimer.unref();
  }

  /** Writes finished attempts in batches: one flush at a time, the next takes what piled up meanwhile. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.results.length ? this.flush() : undefined));
    const batch = this.results;
    const health = this.health;
    this.results = [];
    this.health = { ok: new Set(), failed: new Set() };
    this.flushing = (async () => {
      try {
        await recordAttempts(this.o.db, batch);
        // An endpoint with any success in the batch is not failing every delivery.
        const failedOnly = [...health.failed].filter((id) => !health.ok.has(id));
        const disabled = await updateEndpointHealth(this.o.db, [...health.ok], failedOnly, this.settings.disableAfterSeconds);
        if (disabled.length) this.o.logger.warn({ endpoints: disabled }, 'webhook endpoints disabled: every delivery failed for the configured time');
      } catch (err) {
        // The claims expire and the deliveries are attempted again: at least once, never lost.
        this.o.logger.error({ err, count: batch.length }, 'recording webhook attempts failed');
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Stops claiming, waits a little for attempts in flight, records them; unfinished claims expire. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.poll);
    clearTimeout(this.fanOutTimer);
    clearTimeout(this.retryTimer);
    clearTimeout(this.relisten);
    await this.loop;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.sends]), new Promise((r) => (timer = setTimeout(r, SHUTDOWN_WAIT_MS)))]);
    clearTimeout(timer);
    await this.flushing;
    await this.flush();
    this.sender.close();
    await this.listener?.end().catch(() => undefined);
  }
}

export function startWebhookDelivery(o: WebhookDeliveryOptions): Promise<WebhookDeliveryWorker> {
  const worker = new WebhookDeliveryWorker(o);
  return worker.start().then(() => worker);
}
