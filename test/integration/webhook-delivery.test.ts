// Webhook delivery end to end on one gateway: outbox write → signed POST to a real HTTP
// receiver on loopback. Timeout and retry schedule are shortened by configuration; everything else
// (PostgreSQL queue, LISTEN/NOTIFY, HTTP) is the real thing. Signatures are checked with node:crypto
// in test/helpers/webhook-receiver.ts, not with the product's function.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { signatureValid, v1Count, WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/sip-harness.js';
import { insertEvent, withTransaction, type WebhookEventType } from '../../src/store/index.js';
import { defined } from '../helpers/defined.js';

const TIMEOUT_MS = 1500;
let gw: TestGateway;
let org: TestOrg;
let rx: WebhookReceiver;

beforeAll(async () => {
  rx = await WebhookReceiver.start();
  gw = await startTestGateway({
    webhooks: { allowLoopbackHttp: true, timeoutMs: TIMEOUT_MS, retryScheduleSeconds: [0.2, 0.4, 0.8], pollIntervalMs: 250 },
  });
  org = await gw.createOrg();
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await rx?.close();
});

let pathSeq = 0;
async function addEndpoint(body: Record<string, unknown>, o: TestOrg = org): Promise<{ id: string; secret: string; path: string }> {
  const path = `/hook-${++pathSeq}`;
  const res = await gw.api(o.key, 'POST', '/v1/webhook_endpoints', { url: rx.url(path), ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, secret: res.body.secret, path };
}

/** An outbox write the way state changes do it: inside a transaction. */
async function writeEvent(type: string, data: Record<string, unknown>, orgId = org.orgId): Promise<string> {
  return withTransaction(gw.db, (c) => insertEvent(c, orgId, type as WebhookEventType, data));
}

const eventsAt = (path: string) => rx.at(path).map((r) => r.body);

describe('webhook delivery', () => {
  it('sends an event written by a real API call, in the SPEC envelope, signed, promptly', async () => {
    const ep = await addEndpoint({ events: ['sessions'] });
    const created = await gw.api(org.key, 'POST', '/v1/sessions', { mode: 'help_chat_voice' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const req = await rx.waitFor(() => rx.at(ep.path).length >= 1).then(() => defined(rx.at(ep.path)[0], 'delivery'));
    expect(Object.keys(req.body).sort()).toEqual(['api_version', 'created_at', 'data', 'id', 'type']);
    expect(req.body).toMatchObject({ type: 'session.created', api_version: 'v1', data: { id: created.body.id, object: 'session' } });
    expect(req.body.id).toMatch(/^evt_/);
    const stored = (await gw.db.query('SELECT id, data, created_at FROM webhook_events WHERE id = $1', [req.body.id])).rows[0];
    expect(req.body.data).toEqual(stored.data);
    expect(req.body.created_at).toBe(stored.created_at.toISOString());
    expect(req.headers['content-type']).toBe('application/json');
    expect(signatureValid(req.headers['service-signature'], req.raw, ep.secret)).toBe(true);
    expect(signatureValid(req.headers['service-signature'], req.raw, 'whsec_wrong')).toBe(false);
    expect(req.receivedAt - stored.created_at.getTime()).toBeLessThan(5000);
  });

  it('retries a receiver that fails, with the same event id, until it recovers; the log shows each attempt', async () => {
    const ep = await addEndpoint({ events: ['session.ended'] });
    let failures = 0;
    rx.reply = (r) => (r.path === ep.path && failures++ < 2 ? 503 : 200);
    const id = await writeEvent('session.ended', { id: 'sess_retry', object: 'session', status: 'ended' });
    await rx.waitFor(() => rx.at(ep.path).length >= 3);
    const got = rx.at(ep.path);
    expect(got.map((r) => r.body.id)).toEqual([id, id, id]);
    for (const r of got) expect(signatureValid(r.headers['service-signature'], r.raw, ep.secret)).toBe(true);
    const log = await eventually(async () => {
      const res = await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${ep.id}/deliveries`);
      return res.body.data.length === 3 ? res.body : null;
    });
    // Newest first.
    expect(log.data.map((a: any) => [a.attempt, a.outcome, a.status_code])).toEqual([
      [3, 'delivered', 200],
      [2, 'retry', 503],
      [1, 'retry', 503],
    ]);
    expect(log.data[1].next_retry_at).not.toBeNull();
    expect(log.data[0]).toMatchObject({ object: 'webhook_delivery_attempt', event_id: id, event_type: 'session.ended', error: null });
    rx.reply = () => 200;
  });

  it('gives up on a receiver that hangs past the deadline and retries it', async () => {
    const ep = await addEndpoint({ events: ['recording.ready'] });
    let first = true;
    rx.reply = (r) => (r.path === ep.path && first ? ((first = false), 'hang') : 200);
    const id = await writeEvent('recording.ready', { id: 'rec_1', object: 'recording', session_id: 'sess_hang' });
    const got = await rx.waitFor(() => rx.at(ep.path).length >= 2, 30_000).then(() => rx.at(ep.path));
    expect(defined(got[1], 'retry').body.id).toBe(id);
    expect(defined(got[1], 'retry').receivedAt - defined(got[0], 'first attempt').receivedAt).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    const log = await eventually(async () => {
      const res = await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${ep.id}/deliveries`);
      return res.body.data.length === 2 ? res.body.data : null;
    });
    expect(log[1]).toMatchObject({ attempt: 1, outcome: 'retry', status_code: null });
    expect(log[1].error).toMatch(/timeout/);
    expect(log[0]).toMatchObject({ attempt: 2, outcome: 'delivered' });
    rx.reply = () => 200;
  });

  it('sends transcript.segment only to realtime endpoints', async () => {
    const realtime = await addEndpoint({ events: ['transcripts'], realtime: true });
    const plain = await addEndpoint({ events: ['*'] });
    await writeEvent('transcript.segment', { session_id: 'sess_rt', segment: { id: 'seg_1', text: 'hello', is_final: true } });
    await writeEvent('transcript.ready', { session_id: 'sess_rt', word_count: 1 });
    await rx.waitFor(() => rx.at(realtime.path).length >= 2 && rx.at(plain.path).some((r) => r.body.type === 'transcript.ready'));
    expect(eventsAt(realtime.path).map((e) => e.type)).toEqual(['transcript.segment', 'transcript.ready']);
    expect(eventsAt(plain.path).map((e) => e.type)).not.toContain('transcript.segment');
  });

  it('signs with both secrets during a rotation; each verifies', async () => {
    const ep = await addEndpoint({ events: ['analysis'] });
    const rotated = await gw.api(org.key, 'POST', `/v1/webhook_endpoints/${ep.id}/rotate_secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(ep.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600_000);
    await writeEvent('analysis.completed', { id: 'anl_1', object: 'analysis', session_id: 'sess_rot' });
    const req = await rx.waitFor(() => rx.at(ep.path).length >= 1).then(() => defined(rx.at(ep.path)[0], 'delivery'));
    expect(v1Count(req.headers['service-signature'])).toBe(2);
    expect(signatureValid(req.headers['service-signature'], req.raw, rotated.body.secret)).toBe(true);
    expect(signatureValid(req.headers['service-signature'], req.raw, ep.secret)).toBe(true);
    // The old secret stops signing once its grace period is over.
    await gw.db.query(`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [ep.id]);
    await writeEvent('analysis.failed', { id: 'anl_2', session_id: 'sess_rot' });
    const later = await rx.waitFor(() => rx.at(ep.path).length >= 2).then(() => defined(rx.at(ep.path)[1], 'second delivery'));
    expect(v1Count(later.headers['service-signature'])).toBe(1);
    expect(signatureValid(later.headers['service-signature'], later.raw, rotated.body.secret)).toBe(true);
  });

  it("keeps one session's events in order while the endpoint is healthy", async () => {
    const ep = await addEndpoint({ events: ['transcript.segment'], realtime: true });
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(await writeEvent('transcript.segment', { session_id: 'sess_order', segment: { id: `seg_${i}` } }));
    await rx.waitFor(() => rx.at(ep.path).length >= 25);
    expect(rx.at(ep.path).map((r) => r.body.id)).toEqual(ids);
  });

  it('a hanging endpoint does not hold back another one', async () => {
    const slow = await addEndpoint({ events: ['ai_agent'] });
    const fast = await addEndpoint({ events: ['ai_agent'] });
    rx.reply = (r) => (r.path === slow.path ? 'hang' : 200);
    const started = Date.now();
    await writeEvent('ai_agent.tool_called', { session_id: 'sess_slow', tool: { name: 't', arguments: {}, call_id: 'c1' } });
    await rx.waitFor(() => rx.at(fast.path).length >= 1 && rx.at(slow.path).length >= 1);
    expect(defined(rx.at(fast.path)[0], 'fast delivery').receivedAt - started).toBeLessThan(TIMEOUT_MS);
    await gw.api(org.key, 'DELETE', `/v1/webhook_endpoints/${slow.id}`);
    rx.reply = () => 200;
  });

  it('re-checks the address at delivery time: an endpoint now resolving to a private address is refused', async () => {
    const ep = await addEndpoint({ events: ['recording.failed'] });
    // As if DNS had changed after creation (the row is what a later lookup would see).
    await gw.db.query(`UPDATE webhook_endpoints SET url = 'http://10.1.2.3/hook' WHERE id = $1`, [ep.id]);
    await writeEvent('recording.failed', { session_id: 'sess_ssrf', error: { code: 'recording_generation_failed', message: 'x' } });
    const log = await eventually(async () => {
      const res = await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${ep.id}/deliveries`);
      return res.body.data.length >= 1 ? res.body.data : null;
    });
    expect(log[log.length - 1].error).toMatch(/refused: .*private address \(10\.1\.2\.3\)/);
  });

  it('sends a webhook.test event to the one endpoint asked', async () => {
    const ep = await addEndpoint({ events: ['session.created'] });
    const other = await addEndpoint({ events: ['*'] });
    const res = await gw.api(org.key, 'POST', `/v1/webhook_endpoints/${ep.id}/test`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ object: 'webhook_event', type: 'webhook.test', api_version: 'v1', data: { endpoint_id: ep.id } });
    const req = await rx.waitFor(() => rx.at(ep.path).length >= 1).then(() => defined(rx.at(ep.path)[0], 'delivery'));
    expect(req.body).toEqual({ id: res.body.id, type: 'webhook.test', api_version: 'v1', created_at: res.body.created_at, data: res.body.data });
    expect(signatureValid(req.headers['service-signature'], req.raw, ep.secret)).toBe(true);
    expect(rx.at(other.path).some((r) => r.body.type === 'webhook.test')).toBe(false);
  });

  it('disables an endpoint that failed every delivery for 3 days, shows why, and resumes when re-enabled', async () => {
    const ep = await addEndpoint({ events: ['session.started'] });
    rx.reply = (r) => (r.path === ep.path ? 500 : 200);
    // The failure clock started 3 days ago (the configured window); the next failure trips it.
    await gw.db.query(`UPDATE webhook_endpoints SET failing_since = now() - interval '3 days 1 minute' WHERE id = $1`, [ep.id]);
    const id = await writeEvent('session.started', { id: 'sess_dis', object: 'session', status: 'active' });
    const disabled = await eventually(async () => {
      const res = await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${ep.id}`);
      return res.body.enabled === false ? res.body : null;
    });
    expect(disabled.status).toBe('disabled');
    expect(disabled.disabled_reason).toMatch(/every delivery failed since/);
    rx.reply = () => 200;
    const reenabled = await gw.api(org.key, 'PATCH', `/v1/webhook_endpoints/${ep.id}`, { enabled: true });
    expect(reenabled.body).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    // The refused attempt, then the same event again after re-enabling.
    await rx.waitFor(() => rx.at(ep.path).filter((r) => r.body.id === id).length >= 2);
  });

  it('exposes delivery metrics', async () => {
    const res = await fetch(`${gw.httpUrl}/metrics`);
    const text = await res.text();
    expect(text).toMatch(/voxbridge_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
    expect(text).toMatch(/voxbridge_webhook_deliveries_total\{outcome="retry"\} [1-9]/);
    expect(text).toMatch(/voxbridge_webhook_retry_queue_depth \d+/);
    expect(text).toMatch(/voxbridge_webhook_oldest_undelivered_event_age_seconds [\d.e+-]+/);
  });
});
