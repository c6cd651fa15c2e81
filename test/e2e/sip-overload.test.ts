// Admission by the media clock (MEDIA_OVERLOAD_LATE_PERCENT): while the process's media clock runs
// late (here a tick listener that holds the loop 45 ms every third frame, as a saturated host would),
// a new INVITE gets 503 + Retry-After and a dial media_server_unavailable; once the clock keeps time
// again, calls are taken. Real SIPp callers, the real process clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelephonyFixture, runSipp, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import { Registry } from 'prom-client';
import { registerMediaOverloadMetrics } from '../../src/media/index.js';
import { holdTheMediaClock } from '../helpers/hold-media-clock.js';
import { optionsMessage, udpExchange } from '../helpers/sip-raw.js';

/** The gateway's answer to an OPTIONS ping over UDP: status and Retry-After. */
async function ping(callId: string): Promise<{ status?: number; retryAfter?: string }> {
  const rs = await udpExchange(fx.sipPort, optionsMessage(callId, 'UDP', 9, ['Content-Length: 0']));
  return { status: rs?.status, retryAfter: rs?.header('retry-after') };
}

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture({ sip: { overloadLatePercent: 5 } });
}, 60_000);
afterAll(async () => fx?.stop());

describe('media-path overload guard', () => {
  it('refuses calls and dials while the media clock runs late, and takes them once it keeps time', async () => {
    const target = `127.0.0.1:${fx.sipPort}`;
    await fx.createSession({ phoneNumber: fx.openNumber });
    const release = holdTheMediaClock();
    try {
      await eventually(() => fx.svc.overload.overloaded, 20_000);
      expect(fx.svc.overload.view()).toMatchObject({ enabled: true, overloaded: true });
      const metrics = new Registry();
      registerMediaOverloadMetrics(metrics, fx.svc.overload);
      expect(await metrics.metrics()).toMatch(/voxbridge_media_overload\{stat="overloaded"\} 1/);
      // An edge probing its nodes with OPTIONS hears what an INVITE would (RFC 3261 §11.2).
      expect(await ping('while-late')).toEqual({ status: 503, retryAfter: '5' });
      // uac-expect-503 also requires a Retry-After.
      const refused = await runSipp({ scenario: 'uac-expect-503.xml', target, service: fx.openNumber });
      expect(refused.code, refused.errors).toBe(0);
      const dialSession = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: 'sip:callee@127.0.0.1:9' } } });
      const dial = await fx.svc.dial(dialSession, fx.orgId, {}).then(
        () => null,
        (e: unknown) => e,
      );
      expect(dial).toMatchObject({ code: 'media_server_unavailable', detail: { retryAfterSeconds: 5 } });
    } finally {
      release();
    }
    // Three seconds in a row on time (or an idle clock) clear it.
    await eventually(() => !fx.svc.overload.overloaded, 20_000);
    expect((await ping('on-time')).status).toBe(200);
    const taken = await runSipp({ scenario: 'uac-call.xml', target, service: fx.openNumber, durationMs: 1000 });
    expect(taken.code, taken.errors).toBe(0);
    expect(fx.svc.callCounts['inbound:rejected_503']).toBe(1);
    expect(fx.svc.overload.view().overloads).toBe(1);
    const m = fx.svc.mediaStats();
    expect(m.clockLateRuns).toBeGreaterThan(0);
    expect(m.clockRuns).toBeGreaterThan(m.clockLateRuns ?? 0);
  }, 90_000);
});
