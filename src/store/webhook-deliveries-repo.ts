// The delivery queue behind the outbox (migration 004). Every query here is safe to run from several
// nodes at once: fan-out and claims take row locks with SKIP LOCKED, so one event is fanned out once
// and one attempt is sent by one node; a claim is a lease that expires if its node dies mid-attempt.
import { newId } from '../ids.js';
import { withTransaction, type Db, type DbClient } from './db.js';

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  event_id: string;
  endpoint_id: string;
  event_type: string;
  attempts: number;
  event_created_at: Date;
  data: Record<string, unknown>;
  api_version: string;
}

/**
 * Turns up to `limit` undispatched outbox events into one delivery row per subscribed, enabled
 * endpoint of the event's organization, and marks them dispatched. One node fans out at a time (a
 * transaction-scoped advisory lock; the others skip), which keeps each session's order decided once.
 * Returns how many events were taken, or -1 when another node holds the fan-out.
 */
export async function fanOutEvents(db: Db, limit: number): Promise<number> {
  return withTransaction(db, async (c) => {
    const lock = await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext('voxbridge-webhook-fanout:' || current_schema())) AS ok`);
    if (!lock.rows[0]?.ok) return -1;
    // The worker's statements are named (db.ts).
    const { rows } = await c.query<{ n: number }>({
      name: 'voxbridge_webhook_fan_out',
      text: `WITH picked AS (
         SELECT id, org_id, type, data, created_at,
                COALESCE(data->>'session_id', CASE WHEN type LIKE 'session.%' THEN data->>'id' END) AS ordering_key
           FROM webhook_events WHERE dispatched_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED
       ), matched AS (
         SELECT e.id AS event_id, w.id AS endpoint_id, e.org_id, e.type, e.ordering_key, e.created_at,
                row_number() OVER (PARTITION BY w.id, e.ordering_key ORDER BY e.created_at, e.id) AS nth
           FROM picked e
           JOIN webhook_endpoints w ON w.org_id = e.org_id AND w.enabled
            AND CASE WHEN e.type = 'transcript.segment' THEN w.realtime
                     ELSE '*' = ANY(w.event_types) OR e.type = ANY(w.event_types) END
       ), fanned AS (
         INSERT INTO webhook_deliveries (event_id, endpoint_id, org_id, event_type, ordering_key, event_created_at, ready)
         SELECT m.event_id, m.endpoint_id, m.org_id, m.type, m.ordering_key, m.created_at,
                -- Ready unless an earlier delivery of the session to this endpoint awaits its first attempt or is being sent.
                m.ordering_key IS NULL OR (m.nth = 1 AND NOT EXISTS (
                  SELECT 1 FROM webhook_deliveries p
                   WHERE p.endpoint_id = m.endpoint_id AND p.ordering_key = m.ordering_key AND p.status = 'pending'
                     AND (p.attempts = 0 OR p.locked_until > now())))
           FROM matched m ORDER BY m.created_at, m.event_id, m.endpoint_id
         ON CONFLICT (event_id, endpoint_id) DO NOTHING
         RETURNING 1
       ), marked AS (
         UPDATE webhook_events SET dispatched_at = now() WHERE id IN (SELECT id FROM picked) RETURNING 1
       )
       SELECT (SELECT count(*) FROM marked)::int AS n, (SELECT count(*) FROM fanned)::int AS d`,
      values: [limit],
    });
    return rows[0]?.n ?? 0; // the aggregate SELECT always yields one row
  });
}

export interface ClaimOptions {
  limit: number;
  /** In-flight deliveries per endpoint, across all nodes. */
  perEndpoint: number;
  /** How long the claim holds (the send deadline plus a margin). */
  leaseMs: number;
}

/** Claims due, ready deliveries of enabled endpoints, at most `perEndpoint` in flight per endpoint. */
export async function claimDueDeliveries(db: Db, o: ClaimOptions): Promise<ClaimedDelivery[]> {
  const { rows } = await db.query<ClaimedDelivery>({
    name: 'voxbridge_webhook_claim',
    text: `WITH busy AS (
       SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
        WHERE status = 'pending' AND locked_until IS NOT NULL AND locked_until > now() GROUP BY endpoint_id
     ), candidates AS (
       SELECT d.id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.status = 'pending' AND d.ready AND d.next_attempt_at <= now()
          AND (d.locked_until IS NULL OR d.locked_until <= now())
          AND NOT EXISTS (SELECT 1 FROM busy b WHERE b.endpoint_id = d.endpoint_id AND b.n >= $2)
          AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.enabled)
        ORDER BY d.next_attempt_at, d.id
        LIMIT $1
        FOR UPDATE OF d SKIP LOCKED
     ), ranked AS (
       SELECT c.id, row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.id) + COALESCE(b.n, 0) AS slot
         FROM candidates c LEFT JOIN busy b ON b.endpoint_id = c.endpoint_id
     ), claimed AS (
       UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => $3::double precision / 1000)
         FROM ranked r WHERE d.id = r.id AND r.slot <= $2
       RETURNING d.id, d.event_id, d.endpoint_id, d.event_type, d.attempts, d.event_created_at
     )
     SELECT c.id::text, c.event_id, c.endpoint_id, c.event_type, c.attempts, c.event_created_at, e.data, e.api_version
       FROM claimed c JOIN webhook_events e ON e.id = c.event_id
      ORDER BY c.id`,
    values: [o.limit, o.perEndpoint, o.leaseMs],
  });
  return rows;
}

export interface AttemptResult {
  deliveryId: string;
  outcome: 'delivered' | 'retry' | 'failed';
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: Date;
  nextRetryAt: Date | null;
  /** The receiver's answer, bounded by the sender (migration 013). */
  responseHeaders?: Record<string, string> | null;
  responseBody?: string | null;
}

/** Records a batch of finished attempts: the delivery's new state and one attempt-log row each. */
export async function recordAttempts(db: Db, results: AttemptResult[]): Promise<void> {
  if (results.length === 0) return;
  await withTransaction(db, async (c) => {
    // Serialized with fan-out (same lock): a delivery fanned out as "not ready" behind one whose attempt
    // finishes now is always seen here and unblocked, never left waiting.
    await c.query(`SELECT pg_advisory_xact_lock(hashtext('voxbridge-webhook-fanout:' || current_schema()))`);
    await recordAttemptsIn(c, results);
  });
}

async function recordAttemptsIn(db: DbClient, results: AttemptResult[]): Promise<void> {
  const payload = results.map((r) => ({
    id: Number(r.deliveryId),
    outcome: r.outcome,
    status_code: r.statusCode,
    error: r.error?.slice(0, 500) ?? null,
    duration_ms: r.durationMs,
    attempted_at: r.attemptedAt.toISOString(),
    next_at: r.nextRetryAt?.toISOString() ?? null,
    response_headers: r.responseHeaders ?? null,
    response_body: r.responseBody ?? null,
  }));
  await db.query({
    name: 'voxbridge_webhook_record_attempts',
    text: `WITH r AS (
       SELECT * FROM jsonb_to_recordset($1::jsonb)
         AS x(id bigint, outcome text, status_code integer, error text, duration_ms integer, attempted_at timestamptz, next_at timestamptz,
              response_headers jsonb, response_body text)
     ), updated AS (
       UPDATE webhook_deliveries d SET
           attempts = d.attempts + 1,
           status = CASE r.outcome WHEN 'retry' THEN 'pending' ELSE r.outcome END,
           next_attempt_at = COALESCE(r.next_at, d.next_attempt_at),
           locked_until = NULL,
           last_status_code = r.status_code,
           last_error = r.error,
           finished_at = CASE WHEN r.outcome = 'retry' THEN NULL ELSE now() END
         FROM r WHERE d.id = r.id AND d.status = 'pending'
       RETURNING d.id, d.endpoint_id, d.event_id, d.event_type, d.attempts, d.ordering_key
     ), unblocked AS (
       -- The next delivery of each session becomes ready once this attempt is over.
       UPDATE webhook_deliveries n SET ready = true
        WHERE n.id IN (
          SELECT (SELECT min(s.id) FROM webhook_deliveries s
                   WHERE s.endpoint_id = u.endpoint_id AND s.ordering_key = u.ordering_key AND s.status = 'pending' AND NOT s.ready AND s.id > u.id)
            FROM updated u WHERE u.ordering_key IS NOT NULL)
       RETURNING 1
     )
     INSERT INTO webhook_delivery_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, outcome, status_code, error, duration_ms, attempted_at, next_retry_at,
                                            response_headers, response_body)
     SELECT u.id, u.endpoint_id, u.event_id, u.event_type, u.attempts, r.outcome, r.status_code, r.error, r.duration_ms, r.attempted_at, r.next_at,
            r.response_headers, r.response_body
       FROM updated u JOIN r ON r.id = u.id`,
    values: [JSON.stringify(payload)],
  });
}

/**
 * Keeps each endpoint's failure clock: a success stops it; a failure starts it if stopped. Endpoints
 * whose clock has run for `disableAfterSeconds` are disabled with a reason; returns their ids.
 */
export async function updateEndpointHealth(db: Db, succeeded: string[], failed: string[], disableAfterSeconds: number): Promise<string[]> {
  if (succeeded.length) {
    await db.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY($1) AND failing_since IS NOT NULL', [succeeded]);
  }
  if (failed.length === 0) return [];
  await db.query('UPDATE webhook_endpoints SET failing_since = now() WHERE id = ANY($1) AND failing_since IS NULL', [failed]);
  const { rows } = await db.query<{ id: string }>(
    `UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), updated_at = now(),
            disabled_reason = 'every delivery failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
      WHERE id = ANY($1) AND enabled AND failing_since <= now() - make_interval(secs => $2)
      RETURNING id`,
    [failed, disableAfterSeconds],
  );
  return rows.map((r) => r.id);
}

/** A `webhook.test` event for one endpoint: stored in the outbox already dispatched, with its delivery. */
export async function insertTestEvent(db: Db, orgId: string, endpointId: string, data: Record<string, unknown>): Promise<{ id: string; created_at: Date }> {
  const id = newId('evt');
  const { rows } = await db.query<{ id: string; created_at: Date }>(
    `WITH ev AS (
       INSERT INTO webhook_events (id, org_id, type, data, dispatched_at) VALUES ($1, $2, 'webhook.test', $3, now()) RETURNING id, created_at
     ), d AS (
       INSERT INTO webhook_deliveries (event_id, endpoint_id, org_id, event_type, event_created_at)
       SELECT id, $4, $2, 'webhook.test', created_at FROM ev RETURNING 1
     )
     SELECT id, created_at FROM ev, (SELECT count(*) FROM d) AS n`,
    [id, orgId, JSON.stringify(data), endpointId],
  );
  const row = rows[0];
  if (!row) throw new Error('INSERT webhook_events … RETURNING gave no row');
  return row;
}

export interface AttemptRow {
  id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  outcome: 'delivered' | 'retry' | 'failed';
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
  next_retry_at: Date | null;
}

/** An endpoint's attempt log, newest first; `before` (an attempt id) continues to older ones. */
export async function listAttempts(db: Db, endpointId: string, limit: number, before?: string): Promise<{ items: AttemptRow[]; hasMore: boolean }> {
  const { rows } = await db.query<AttemptRow>(
    `SELECT id::text, event_id, event_type, attempt, outcome, status_code, error, duration_ms, attempted_at, next_retry_at
       FROM webhook_delivery_attempts WHERE endpoint_id = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
      ORDER BY id DESC LIMIT $3`,
    [endpointId, before ?? null, limit + 1],
  );
  return { items: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** One attempt with what was sent (the event's envelope data) and the receiver's answer; null when not the org's. */
export interface AttemptDetail extends AttemptRow {
  endpoint_id: string;
  delivery_status: 'pending' | 'delivered' | 'failed';
  event_data: Record<string, unknown>;
  event_created_at: Date;
  api_version: string;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

export async function getAttemptDetail(db: Db, orgId: string, attemptId: string): Promise<AttemptDetail | null> {
  if (!/^[0-9]{1,18}$/.test(attemptId)) return null;
  const { rows } = await db.query<AttemptDetail>(
    `SELECT a.id::text, a.event_id, a.event_type, a.attempt, a.outcome, a.status_code, a.error, a.duration_ms, a.attempted_at,
            a.next_retry_at, a.endpoint_id, a.response_headers, a.response_body, d.status AS delivery_status,
            e.data AS event_data, e.created_at AS event_created_at, e.api_version
       FROM webhook_delivery_attempts a
       JOIN webhook_deliveries d ON d.id = a.delivery_id
       JOIN webhook_events e ON e.id = a.event_id
      WHERE a.id = $1::bigint AND d.org_id = $2`,
    [attemptId, orgId],
  );
  return rows[0] ?? null;
}

/**
 * Re-queues a finished delivery of `eventId` to `endpointId` for one more attempt now (the console's
 * "replay"): pending, ready, unlocked, due now; its attempt count continues. Wakes the workers.
 * Returns 'not_found' (not this organization's), 'pending' (already queued) or 'queued'.
 */
export async function replayDelivery(db: Db, orgId: string, endpointId: string, eventId: string): Promise<'not_found' | 'pending' | 'queued'> {
  return withTransaction(db, async (c) => {
    const { rows } = await c.query<{ id: string; status: string }>(
      'SELECT id::text, status FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2 AND org_id = $3 FOR UPDATE',
      [endpointId, eventId, orgId],
    );
    const d = rows[0];
    if (!d) return 'not_found';
    if (d.status === 'pending') return 'pending';
    await c.query(
      `UPDATE webhook_deliveries SET status = 'pending', ready = true, next_attempt_at = now(), locked_until = NULL, finished_at = NULL
        WHERE id = $1::bigint`,
      [d.id],
    );
    await c.query(`SELECT pg_notify('webhooks_' || current_schema(), '')`);
    return 'queued';
  });
}

export interface DeliveryQueueStats {
  /** Pending deliveries that failed at least once (waiting for a retry). */
  retryQueueDepth: number;
  /** Age in seconds of the oldest event not yet delivered to an enabled endpoint (0 when none). */
  oldestUndeliveredSeconds: number;
}

export async function deliveryQueueStats(db: Db): Promise<DeliveryQueueStats> {
  const { rows } = await db.query<{ retry: number; oldest: number | null }>(
    `SELECT (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND attempts > 0)::int AS retry,
            extract(epoch FROM now() - LEAST(
              (SELECT min(d.event_created_at) FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.enabled WHERE d.status = 'pending'),
              (SELECT min(created_at) FROM webhook_events WHERE dispatched_at IS NULL)))::float8 AS oldest`,
  );
  const stats = rows[0]; // scalar subqueries: always one row
  return { retryQueueDepth: stats?.retry ?? 0, oldestUndeliveredSeconds: Math.max(0, stats?.oldest ?? 0) };
}

/**
 * Retention: deletes attempt-log rows, finished deliveries and dispatched events older than
 * `days`, at most `batch` rows per table per call. An event with a pending delivery is kept.
 */
export async function purgeDeliveryHistory(db: Db, days: number, batch: number): Promise<{ attempts: number; deliveries: number; events: number }> {
  const cutoff = `now() - make_interval(days => $1)`;
  const attempts = await db.query(
    `DELETE FROM webhook_delivery_attempts WHERE id IN (SELECT id FROM webhook_delivery_attempts WHERE attempted_at < ${cutoff} LIMIT $2)`,
    [days, batch],
  );
  const deliveries = await db.query(
    `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < ${cutoff} LIMIT $2)`,
    [days, batch],
  );
  const events = await db.query(
    `DELETE FROM webhook_events WHERE id IN (
       SELECT e.id FROM webhook_events e WHERE e.dispatched_at < ${cutoff}
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.status = 'pending') LIMIT $2)`,
    [days, batch],
  );
  return { attempts: attempts.rowCount ?? 0, deliveries: deliveries.rowCount ?? 0, events: events.rowCount ?? 0 };
}
