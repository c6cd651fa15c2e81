// Outbound dials against SIPp callees: plain answer, digest challenge through a provider connection,
// callee BYE, busy, and the dial error rules (session_not_dialable, sip_not_enabled,
// no_default_provider, media_server_unavailable with an unreachable rtpengine); capacity 503 inbound.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { startTelephonyFixture, startSipp, runSipp, eventually, attachedBeforeSippEnds, freePort, type TelephonyFixture } from '../helpers/sip-harness.js';
import * as repo from '../../src/store/telephony-repo.js';
import { encryptSecret } from '../../src/secrets/index.js';
import { TelephonyError } from '../../src/telephony/errors.js';
import { updateOrg } from '../../src/store/index.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';
import { Registry } from 'prom-client';
import { registerTelephonyMetrics, type Telephony } from '../../src/telephony/index.js';
import { optionsMessage, udpExchange } from '../helpers/sip-raw.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
});
afterAll(async () => {
  await fx?.stop();
});

const ok = (r: { code: number; errors: string; stderr: string }) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);

async function dialError(p: Promise<unknown>): Promise<TelephonyError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TelephonyError);
    return err as TelephonyError;
  }
  throw new Error('dial unexpectedly succeeded');
}

describe('outbound SIP dial', () => {
  it('dials a SIP URI with X- headers, bridges the leg and hangs up', async () => {
    const callee = await startSipp({ scenario: 'uas-answer.xml' });
    const sessionId = await fx.createSession({
      routing: {
        type: 'sip',
        sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}`, from_uri: 'sip:+15550009999@voxbridge.test', headers: { 'X-Voxbridge-Test': 'yes' } },
      },
    });
    const attached = fx.sessions.nextLeg();
    const call = await fx.svc.dial(sessionId, fx.orgId, { party: 'agent', headers: { 'X-Extra': 'ok' } });
    expect(call).toMatchObject({ object: 'call', provider: 'sip', party: 'agent', direction: 'outbound', status: 'in-progress' });
    const rec = await attached;
    expect(rec.leg.party).toBe('agent');
    expect(fx.svc.legsOf(sessionId)).toHaveLength(1);
    const views = await fx.svc.hangup(sessionId, fx.orgId, {});
    expect(views[0]).toMatchObject({ call_sid: call.call_sid, status: 'completed' });
    ok(await callee.done);
    await eventually(() => rec.detached === 'hangup');
    const row = await eventually(async () => (await fx.db.query('SELECT * FROM calls WHERE call_sid = $1 AND ended_at IS NOT NULL', [call.call_sid])).rows[0]);
    expect(row).toMatchObject({ direction: 'outbound', party: 'agent', status: 'completed' });
  });

  it('answers a digest challenge with the connection credentials, then hangs up by call id', async () => {
    const callee = await startSipp({ scenario: 'uas-auth.xml' });
    const conn = await repo.createConnection(fx.db, {
      orgId: fx.orgId,
      provider: 'carrier_b',
      host: '127.0.0.1',
      port: callee.port,
      transport: 'udp',
      inboundCidrs: [],
      username: 'carrier',
      passwordEnc: encryptSecret(fx.config.secretKey, 's3cret'),
    });
    const sessionId = await fx.createSession({ routing: { connection_id: conn.id } });
    await fx.db.query('UPDATE sessions SET connection_id = $2 WHERE id = $1', [sessionId, conn.id]);
    const call = await fx.svc.dial(sessionId, fx.orgId, { to: '+14155550100', from: '+15550001234', headers: { 'X-Voxbridge-Test': 'auth' } });
    expect(call).toMatchObject({ provider: 'carrier_b', to: 'sip:+14155550100@127.0.0.1:' + callee.port });
    await fx.svc.hangup(sessionId, fx.orgId, { call_id: call.id });
    ok(await callee.done);
  });

  it('dials over TCP when the connection says so', async () => {
    const callee = await startSipp({ scenario: 'uas-answer.xml', transport: 't1' });
    const conn = await repo.createConnection(fx.db, {
      orgId: fx.orgId,
      provider: 'carrier_a',
      host: '127.0.0.1',
      port: callee.port,
      transport: 'tcp',
      inboundCidrs: [],
    });
    const sessionId = await fx.createSession({ routing: { connection_id: conn.id } });
    await fx.db.query('UPDATE sessions SET connection_id = $2 WHERE id = $1', [sessionId, conn.id]);
    const call = await fx.svc.dial(sessionId, fx.orgId, { to: '+14155550111', headers: { 'X-Voxbridge-Test': 'tcp' } });
    expect(call.provider).toBe('carrier_a');
    await fx.svc.hangup(sessionId, fx.orgId, {});
    ok(await callee.done);
  });

  it('reports the callee hanging up', async () => {
    const callee = await startSipp({ scenario: 'uas-answer-bye.xml', durationMs: 300 });
    const sessionId = await fx.createSession({
      routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}`, headers: { 'X-Voxbridge-Test': '1' } } },
    });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, {});
    const rec = await attached;
    ok(await callee.done);
    await eventually(() => rec.detached === 'remote_hangup');
    expect((rec.leg as SipLeg).isEnded).toBe(true);
  });

  it('fails with dial_failed naming the SIP status when the callee refuses', async () => {
    const callee = await startSipp({ scenario: 'uas-busy.xml' });
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}` } } });
    const err = await dialError(fx.svc.dial(sessionId, fx.orgId, {}));
    expect(err.code).toBe('dial_failed');
    expect(err.message).toContain('486');
    ok(await callee.done);
    const row = (await fx.db.query('SELECT status FROM calls WHERE session_id = $1', [sessionId])).rows[0];
    expect(row.status).toBe('failed');
  });

  it('applies the dial rules: ended session, SIP disabled, no provider, nothing to hang up', async () => {
    const ended = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: 'sip:x@127.0.0.1:9' } }, status: 'ended' });
    expect((await dialError(fx.svc.dial(ended, fx.orgId, {}))).code).toBe('session_not_dialable');
    const noRoute = await fx.createSession({});
    expect((await dialError(fx.svc.dial(noRoute, fx.orgId, { to: '+14155550100' }))).code).toBe('no_default_provider');
    await expect(fx.svc.hangup(noRoute, fx.orgId, {})).rejects.toMatchObject({ code: 'session_not_dialable' });
    await expect(fx.svc.dial(noRoute, 'org_other', {})).rejects.toMatchObject({ code: 'session_not_found' });
    await updateOrg(fx.db, fx.orgId, { sipEnabled: false });
    try {
      const sip = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: 'sip:x@127.0.0.1:9' } } });
      expect((await dialError(fx.svc.dial(sip, fx.orgId, {}))).code).toBe('sip_not_enabled');
    } finally {
      await updateOrg(fx.db, fx.orgId, { sipEnabled: true });
    }
  });
});

describe('metrics', () => {
  it('exposes active calls, call outcomes and RTP counters', async () => {
    const registry = new Registry();
    const svc = fx.svc;
    registerTelephonyMetrics(registry, {
      get activeCalls() {
        return svc.activeLegs;
      },
      callCounts: () => ({ ...svc.callCounts }),
      refusedCounts: () => ({ ...svc.refusals.counts }),
      requestCounts: () => ({ ...svc.ua.requestCounts }),
      mediaStats: () => svc.mediaStats(),
    } as unknown as Telephony);
    const text = await registry.metrics();
    expect(text).toMatch(/voxbridge_sip_active_calls 0/);
    expect(text).toMatch(/voxbridge_sip_calls\{direction="outbound",result="completed"\} [1-9]/);
    expect(text).toMatch(/voxbridge_sip_calls\{direction="outbound",result="failed_486"\} 1/);
    expect(text).toMatch(/voxbridge_rtp_media\{counter="packets_out"\} [1-9]/);
    expect(text).toMatch(/voxbridge_rtp_media\{counter="silence_trimmed"\} \d+\n/);
    expect(text).toMatch(/voxbridge_rtp_media\{counter="playout_moved_later"\} \d+\n/);
    // The calls above ticked the media clock.
    expect(text).toMatch(/voxbridge_rtp_media\{counter="clock_runs"\} [1-9]/);
    // The calls above ran on the default MEDIA_IO=auto: their RTP sockets were read by the batched reader
    // (these callees send no RTP, so it is the reads that show it).
    expect(text).toMatch(/voxbridge_rtp_native_io\{counter="reads"\} [1-9]/);
    expect(text).toMatch(/voxbridge_rtp_native_io\{counter="truncated"\} 0/);
    expect(text).toMatch(/voxbridge_rtp_native_io\{counter="send_waits"\} \d+/);
  });
});

describe('limits and the media server', () => {
  it('fails dials with media_server_unavailable when rtpengine does not answer', async () => {
    const dead = await freePort();
    const f2 = await startTelephonyFixture({ rtpengineNg: `127.0.0.1:${dead}` });
    try {
      const sessionId = await f2.createSession({ routing: { type: 'sip', sip: { to_uri: 'sip:callee@127.0.0.1:9' } } });
      const err = await dialError(f2.svc.dial(sessionId, f2.orgId, {}));
      expect(err.code).toBe('media_server_unavailable');
    } finally {
      await f2.stop();
    }
  });

  it('hangs up a leg whose RTP stops (rtp_timeout) and reports it', async () => {
    const f4 = await startTelephonyFixture({ rtpTimeoutSeconds: 1 });
    try {
      const sessionId = await f4.createSession({ phoneNumber: f4.openNumber });
      const attached = f4.sessions.nextLeg();
      // The caller never sends RTP: the gateway gives up after RTP_TIMEOUT_SECONDS and sends BYE.
      const run = await startSipp({ scenario: 'uac-call-remote-bye.xml', target: `127.0.0.1:${f4.sipPort}`, service: f4.openNumber });
      const rec = await attachedBeforeSippEnds(attached, run);
      ok(await run.done);
      await eventually(() => rec.detached === 'rtp_timeout');
      const ev = await eventually(
        async () =>
          (await f4.db.query(`SELECT data FROM webhook_events WHERE type = 'session.provider.disconnected' AND data->>'session_id' = $1`, [sessionId])).rows[0],
      );
      expect(ev.data.provider.disconnect_reason).toBe('rtp_timeout');
    } finally {
      await f4.stop();
    }
  });

  it('refuses to start on a SIP port in use instead of crashing', async () => {
    await expect(startTelephonyFixture({ sipPort: fx.sipPort })).rejects.toThrow(/in use/);
  });

  it('answers 503 with Retry-After over capacity', async () => {
    const f3 = await startTelephonyFixture({ maxConcurrentCalls: 1 });
    try {
      const target = `127.0.0.1:${f3.sipPort}`;
      await f3.createSession({ phoneNumber: f3.openNumber });
      await f3.createSession({ phoneNumber: f3.openNumber });
      const attached = f3.sessions.nextLeg();
      const first = await startSipp({ scenario: 'uac-call-remote-bye.xml', target, service: f3.openNumber });
      const rec = await attachedBeforeSippEnds(attached, first);
      ok(await runSipp({ scenario: 'uac-expect-503.xml', target, service: f3.openNumber }));
      // Full, the node answers an OPTIONS ping as it would an INVITE (RFC 3261 §11.2).
      const ping = await udpExchange(f3.sipPort, optionsMessage('full', 'UDP', 9, ['Content-Length: 0']));
      expect([ping?.status, ping?.header('retry-after')]).toEqual([503, '5']);
      rec.leg.close('done');
      ok(await first.done);
    } finally {
      await f3.stop();
    }
  });
});
