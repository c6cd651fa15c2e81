// The delivery worker's fan-outs of the outbox (README "Webhooks"): every committed event NOTIFYs,
// and a burst of events shares fan-outs, at most one per webhooks.fanOutIntervalMs, instead of one each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { insertEvent, withTransaction } from '../../src/store/index.js';

const FAN_OUT_INTERVAL_MS = 1000;
const BURST = 20;
let gw: TestGateway;
let org: TestOrg;
let rx: WebhookReceiver;

beforeAll(async () => {
  rx = await WebhookReceiver.start();
  gw = await startTestGateway({ webhooks: { allowLoopbackHttp: true, fanOutIntervalMs: FAN_OUT_INTERVAL_MS, pollIntervalMs: 60_000 } });
  org = await gw.createOrg();
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await rx?.close();
});

async function fanOuts(): Promise<number> {
  const text = await (await fetch(`${gw.httpUrl}/metrics`)).text();
  const m = /^voxbridge_webhook_fan_outs_total (\d+)$/m.exec(text);
  if (!m?.[1]) throw new Error('voxbridge_webhook_fan_outs_total missing from /metrics');
  return Number(m[1]);
}

describe('webhook worker fan-outs', () => {
  it('delivers every event of a burst written in separate transactions, in a few shared fan-outs', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: rx.url('/burst'), events: ['*'] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const before = await fanOuts();
    const startedAt = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < BURST; i++) {
      ids.push(await withTransaction(gw.db, (c) => insertEvent(c, org.orgId, 'session.ended', { id: `sess_burst_${i}`, object: 'session' })));
    }
    const writtenMs = Date.now() - startedAt;
    await rx.waitFor(() => rx.at('/burst').length >= BURST);
    expect(new Set(rx.at('/burst').map((r) => r.body.id))).toEqual(new Set(ids));
    // A fan-out per event without the interval. With it: the burst's NOTIFYs share one per interval (the
    // first may start at once, the last after the writes).
    const allowed = Math.ceil(writtenMs / FAN_OUT_INTERVAL_MS) + 2;
    const after = await fanOuts();
    expect(after).toBeGreaterThan(before);
    expect(after).toBeLessThanOrEqual(before + allowed);
  });
});
