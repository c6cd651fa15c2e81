// Retention of webhook history (README "Webhooks"): finished deliveries, their attempt logs and
// dispatched events older than the retention period go; anything still pending stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { eventually } from '../helpers/sip-harness.js';
import { insertEvent, purgeDeliveryHistory, withTransaction } from '../../src/store/index.js';

let gw: TestGateway;
let rx: WebhookReceiver;

beforeAll(async () => {
  rx = await WebhookReceiver.start();
  gw = await startTestGateway({ webhooks: { allowLoopbackHttp: true, retryScheduleSeconds: [3600], pollIntervalMs: 250 } });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await rx?.close();
});

describe('webhook retention', () => {
  it('deletes delivered history past the period and keeps pending deliveries', async () => {
    const org = await gw.createOrg();
    const ok = (await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: rx.url('/ok'), events: ['*'] })).body;
    const down = (await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: rx.url('/down'), events: ['*'] })).body;
    rx.reply = (r) => (r.path === '/down' ? 500 : 200);
    const id = await withTransaction(gw.db, (c) => insertEvent(c, org.orgId, 'session.ended', { id: 'sess_old', object: 'session', status: 'ended' }));
    // Delivered to one endpoint; the other failed once and waits an hour for its retry.
    await eventually(async () => (await gw.db.query(`SELECT 1 FROM webhook_deliveries WHERE event_id = $1 AND attempts = 1`, [id])).rowCount === 2);
    // Age everything by 31 days.
    await gw.db.query(
      `UPDATE webhook_events SET created_at = created_at - interval '31 days', dispatched_at = dispatched_at - interval '31 days' WHERE id = $1`,
      [id],
    );
    await gw.db.query(`UPDATE webhook_deliveries SET finished_at = finished_at - interval '31 days' WHERE event_id = $1`, [id]);
    await gw.db.query(`UPDATE webhook_delivery_attempts SET attempted_at = attempted_at - interval '31 days' WHERE event_id = $1`, [id]);

    const purged = await purgeDeliveryHistory(gw.db, 30, 1000);
    expect(purged).toMatchObject({ attempts: 2, deliveries: 1, events: 0 });
    const left = (await gw.db.query('SELECT endpoint_id, status FROM webhook_deliveries WHERE event_id = $1', [id])).rows;
    expect(left).toEqual([{ endpoint_id: down.id, status: 'pending' }]);
    expect((await gw.db.query('SELECT 1 FROM webhook_events WHERE id = $1', [id])).rowCount).toBe(1);
    expect((await gw.api(org.key, 'GET', `/v1/webhook_endpoints/${ok.id}/deliveries`)).body.data).toEqual([]);

    // Once nothing is pending, the event goes too.
    await gw.db.query(`UPDATE webhook_deliveries SET status = 'failed', finished_at = now() - interval '31 days' WHERE event_id = $1`, [id]);
    expect(await purgeDeliveryHistory(gw.db, 30, 1000)).toMatchObject({ deliveries: 1, events: 1 });
  });
});
