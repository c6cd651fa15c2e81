// The delivery worker's passes over the outbox (README "Webhooks"): every committed event NOTIFYs,
// and a burst of events shares passes, at most one per webhooks.passIntervalMs, instead of one each.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway, type TestOrg } from '../helpers/gateway.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { insertEvent, withTransaction } from '../../src/store/index.js';

const PASS_INTERVAL_MS = 1000;
const BURST = 20;
let gw: TestGateway;
let org: TestOrg;
let rx: WebhookReceiver;

beforeAll(async () => {
  rx = await WebhookReceiver.start();
  gw = await startTestGateway({ webhooks: { allowLoopbackHttp: true, passIntervalMs: PASS_INTERVAL_MS, pollIntervalMs: 60_000 } });
  org = await gw.createOrg();
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await rx?.close();
});

async function passes(): Promise<number> {
  const text = await (await fetch(`${gw.httpUrl}/metrics`)).text();
  const m = /^voxbridge_webhook_passes_total (\d+)$/m.exec(text);
  if (!m?.[1]) throw new Error('voxbridge_webhook_passes_total missing from /metrics');
  return Number(m[1]);
}

describe('webhook worker passes', () => {
  it('delivers every event of a burst written in separate transactions, in a few shared passes', async () => {
    const res = await gw.api(org.key, 'POST', '/v1/webhook_endpoints', { url: rx.url('/burst'), events: ['*'] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const before = await passes();
    const startedAt = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < BURST; i++) {
      ids.push(await withTransaction(gw.db, (c) => insertEvent(c, org.orgId, 'session.ended', { id: `sess_burst_${i}`, object: 'session' })));
    }
    const writtenMs = Date.now() - startedAt;
    await rx.waitFor(() => rx.at('/burst').length >= BURST);
    expect(new Set(rx.at('/burst').map((r) => r.body.id))).toEqual(new Set(ids));
    // One pass per event without the interval. With it: the burst's NOTIFYs share one pass per interval
    // (the first may start at once), and the sends' own wake-ups one more once they finish.
    const allowed = Math.ceil(writtenMs / PASS_INTERVAL_MS) + 3;
    expect(await passes()).toBeGreaterThan(before);
    expect(await passes()).toBeLessThanOrEqual(before + allowed);
  });
});
