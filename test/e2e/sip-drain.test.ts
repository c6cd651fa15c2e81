// Graceful drain: while draining, a new INVITE gets 503 + Retry-After and the live call keeps
// going until its caller hangs up; drain() then returns without ending it early.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelephonyFixture, startSipp, runSipp, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import { TelephonyError } from '../../src/telephony/errors.js';
import { optionsMessage, udpExchange } from '../helpers/sip-raw.js';

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
    // An edge probing with OPTIONS hears the same 503 (RFC 3261 §11.2) and stops sending calls here.
    const ping = await udpExchange(fx.sipPort, optionsMessage('draining', 'UDP', 9, ['Content-Length: 0']));
    expect(ping?.status).toBe(503);
    expect(ping?.header('retry-after')).toBe('5');
    await drained;
    const r = await live.done;
    expect(r.code, r.errors).toBe(0); // ended by the caller's own BYE, not by us
    expect(fx.svc.activeLegs).toBe(0);
    expect(fx.svc.callCounts['inbound:rejected_503']).toBe(1);
  }, 90_000);

  it('cancels a ringing dial when the drain starts and refuses new dials with 503 + Retry-After', async () => {
    // A fresh fixture: the first test left this one draining.
    const f = await startTelephonyFixture();
    try {
      const callee = await startSipp({ scenario: 'uas-ring-cancel.xml' });
      const sessionId = await f.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}` } } });
      const dialing = f.svc.dial(sessionId, f.orgId, { ringTimeoutSeconds: 60 }).then(
        () => null,
        (e: unknown) => e,
      );
      // Ringing: the 180 reached us (the call row exists, the dial is pending).
      await eventually(async () => (await f.db.query('SELECT 1 FROM calls WHERE session_id = $1', [sessionId])).rowCount === 1, 20_000);
      await new Promise((r) => setTimeout(r, 200)); // let the 180 arrive so CANCEL is allowed (RFC 3261 §9.1)
      const drained = f.svc.drain(10_000);
      const err = await dialing;
      expect(err).toBeInstanceOf(TelephonyError);
      expect(err).toMatchObject({ code: 'media_server_unavailable', detail: { retryAfterSeconds: 5 } });
      const r = await callee.done; // the callee saw CANCEL, answered 487 and got its ACK
      expect(r.code, r.errors).toBe(0);
      const row = await eventually(
        async () => (await f.db.query('SELECT status, disconnect_reason FROM calls WHERE session_id = $1 AND ended_at IS NOT NULL', [sessionId])).rows[0],
        20_000,
      );
      expect(row).toEqual({ status: 'canceled', disconnect_reason: 'drain' });
      const refused = await f.svc.dial(sessionId, f.orgId, {}).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused).toMatchObject({ code: 'media_server_unavailable', detail: { retryAfterSeconds: 5 } });
      await drained;
      expect(f.svc.callCounts['outbound:canceled_drain']).toBe(1);
    } finally {
      await f.stop();
    }
  }, 120_000);
});
