// Graceful drain: while draining, a new INVITE gets 503 + Retry-After and the live call keeps
// going until its caller hangs up; drain() then returns without ending it early.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelephonyFixture, startSipp, runSipp, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
}, 60_000);
afterAll(async () => fx?.stop());

describe('graceful SIP drain', () => {
  it('refuses new INVITEs with 503 and lets the live call finish', async () => {
    const target = `127.0.0.1:${fx.sipPort}`;
    await fx.createSession({ phoneNumber: fx.openNumber });
    const live = await startSipp({ scenario: 'uac-call.xml', target, service: fx.openNumber, durationMs: 3000 });
    await eventually(() => fx.svc.activeLegs === 1, 20_000);
    const drained = fx.svc.drain(30_000);
    // A second caller is turned away while draining (uac-expect-503 checks for 503).
    const refused = await runSipp({ scenario: 'uac-expect-503.xml', target, service: fx.openNumber });
    expect(refused.code, refused.errors).toBe(0);
    await drained;
    const r = await live.done;
    expect(r.code, r.errors).toBe(0); // ended by the caller's own BYE, not by us
    expect(fx.svc.activeLegs).toBe(0);
    expect(fx.svc.callCounts['inbound:rejected_503']).toBe(1);
  }, 90_000);
});
