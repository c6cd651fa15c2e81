// Inbound SIP against SIPp: managed numbers, admission rules, CANCEL, BYE both ways, hold,
// OPTIONS, unsupported and malformed requests, RTP both ways. Media terminates at the gateway's
// own RTP endpoint (no rtpengine here; see sip-rtpengine.test.ts).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import { startTelephonyFixture, runSipp, startSipp, eventually, attachedBeforeSippEnds, type TelephonyFixture } from '../helpers/sip-harness.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode, alawDecode } from '../../src/media/g711.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

let fx: TelephonyFixture;
let target: string;

beforeAll(async () => {
  fx = await startTelephonyFixture();
  target = `127.0.0.1:${fx.sipPort}`;
});
afterAll(async () => {
  await fx?.stop();
});

const ok = (r: { code: number; errors: string; stderr: string }) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);

function tone(amplitude: number): Int16Array {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return f;
}
const rms = (f: Int16Array) => Math.sqrt(f.reduce((a, s) => a + s * s, 0) / f.length);

describe('inbound SIP', () => {
  it('answers OPTIONS keep-alives with 200 and Allow', async () => {
    ok(await runSipp({ scenario: 'uac-options.xml', target }));
  });

  it('bridges a call to the waiting session: RTP both ways, gateway BYE, call row and provider events', async () => {
    const sessionId = await fx.createSession({ phoneNumber: fx.openNumber });
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((r) => peer.bind(0, '127.0.0.1', () => r()));
    const peerPort = peer.address().port;
    const attached = fx.sessions.nextLeg();
    const sipp = await startSipp({ scenario: 'uac-call-remote-bye.xml', target, service: fx.openNumber, keys: { rtp_port: String(peerPort) } });
    const rec = await attachedBeforeSippEnds(attached, sipp);
    expect(rec.sessionId).toBe(sessionId);
    expect(rec.leg.party).toBe('customer');
    const leg = rec.leg as SipLeg;

    // Phone → gateway: PCMA (first in the offer) decoded into 20 ms frames for the session.
    const payload = alawEncode(tone(8000));
    for (let i = 0; i < 25; i++)
      peer.send(serializeRtp({ marker: i === 0, payloadType: 8, sequence: i, timestamp: i * 160, ssrc: 99, payload }), leg.rtpPort, '127.0.0.1');
    await eventually(() => rec.frames.some((f) => rms(f) > 3000));

    // Session → phone: frames played on the leg arrive as PCMA RTP.
    const heard: number[] = [];
    peer.on('message', (m) => {
      const p = parseRtp(m);
      if (p && p.payloadType === 8) heard.push(rms(alawDecode(p.payload)));
    });
    for (let i = 0; i < 10; i++) leg.playFrame(tone(6000));
    await eventually(() => heard.some((v) => v > 3000));

    leg.close('test_hangup');
    ok(await sipp.done);
    peer.close();
    const call = await eventually(async () => (await fx.db.query(`SELECT * FROM calls WHERE session_id = $1 AND ended_at IS NOT NULL`, [sessionId])).rows[0]);
    expect(call).toMatchObject({
      party: 'customer',
      direction: 'inbound',
      provider: 'carrier_a',
      status: 'completed',
      disconnect_reason: 'test_hangup',
      to_uri: fx.openNumber,
    });
    const events = await eventually(async () => {
      const { rows } = await fx.db.query(`SELECT type, data FROM webhook_events WHERE data->>'session_id' = $1 ORDER BY created_at`, [sessionId]);
      return rows.length === 2 ? rows : null;
    });
    expect(events[0].type).toBe('session.provider.connected');
    expect(events[0].data.provider).toMatchObject({ type: 'carrier_a', call_sid: call.call_sid, status: 'connected', to: fx.openNumber });
    expect(events[1].type).toBe('session.provider.disconnected');
    expect(events[1].data.provider).toMatchObject({ call_sid: call.call_sid, disconnect_reason: 'test_hangup' });
    expect(typeof events[1].data.provider.duration).toBe('number');
    expect(rec.detached).toBe('test_hangup');
  });

  it("ends the leg on the caller's BYE (UDP and TCP)", async () => {
    for (const transport of ['u1', 't1'] as const) {
      await fx.createSession({ phoneNumber: fx.openNumber });
      const attached = fx.sessions.nextLeg();
      const run = startSipp({ scenario: 'uac-call.xml', target, service: fx.openNumber, durationMs: 200, transport });
      const rec = await attached;
      ok(await (await run).done);
      await eventually(() => rec.detached === 'remote_hangup');
    }
    await eventually(() => fx.svc.activeLegs === 0);
  });

  it('takes a late offer: our offer in the 200 OK, the answer from the ACK', async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const attached = fx.sessions.nextLeg();
    const run = startSipp({ scenario: 'uac-call-late-offer.xml', target, service: fx.openNumber, durationMs: 200 });
    const rec = await attached;
    expect((rec.leg as SipLeg).codec).toBe('PCMU');
    ok(await (await run).done);
    await eventually(() => rec.detached === 'remote_hangup');
  });

  it('keeps media through a re-INVITE hold and resume', async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const attached = fx.sessions.nextLeg();
    const run = startSipp({ scenario: 'uac-call-hold.xml', target, service: fx.openNumber });
    const leg = (await attached).leg as SipLeg;
    const holds: boolean[] = [];
    leg.on('hold', (h) => holds.push(h));
    ok(await (await run).done);
    expect(holds).toEqual([true, false]);
  });

  it('answers CANCEL with 200 and the INVITE with 487, leaving nothing behind', async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const before = fx.sessions.legs.length;
    ok(await runSipp({ scenario: 'uac-cancel.xml', target, service: fx.openNumber }));
    expect(fx.svc.ua.pendingInviteCount).toBe(0);
    expect(fx.sessions.legs.length).toBe(before);
  });

  it('refuses unknown numbers (404), disallowed sources (403), no waiting session (480), no common codec (488)', async () => {
    ok(await runSipp({ scenario: 'uac-expect-404.xml', target, service: '+19999999999' }));
    ok(await runSipp({ scenario: 'uac-expect-403.xml', target, service: fx.closedNumber }));
    const idle = `+1888${String(Date.now()).slice(-7)}`;
    const { createPhoneNumber } = await import('../../src/store/telephony-repo.js');
    const conn = (await fx.db.query(`SELECT connection_id FROM phone_numbers WHERE number = $1`, [fx.openNumber])).rows[0].connection_id;
    await createPhoneNumber(fx.db, { orgId: fx.orgId, number: idle, connectionId: conn });
    ok(await runSipp({ scenario: 'uac-expect-480.xml', target, service: idle }));
    await fx.createSession({ phoneNumber: fx.openNumber });
    ok(await runSipp({ scenario: 'uac-expect-488.xml', target, service: fx.openNumber }));
  });

  it('authenticates a PBX by digest when its address is not listed', async () => {
    await fx.createSession({ phoneNumber: fx.pbxNumber });
    const attached = fx.sessions.nextLeg();
    const run = startSipp({ scenario: 'uac-call-auth.xml', target, service: fx.pbxNumber, durationMs: 100, extra: ['-au', 'pbx', '-ap', 'pbxpass'] });
    await attached;
    ok(await (await run).done);
    // Wrong password: challenged, then refused.
    ok(await runSipp({ scenario: 'uac-auth-refused.xml', target, service: fx.pbxNumber, extra: ['-au', 'pbx', '-ap', 'wrong'] }));
  });

  it('answers unsupported methods 405, unknown dialogs 481, malformed requests 400, and survives garbage', async () => {
    ok(await runSipp({ scenario: 'uac-unsupported.xml', target }));
    const s = dgram.createSocket('udp4');
    const junk = [
      Buffer.from('garbage'),
      Buffer.from('INVITE sip:x SIP/2.0\r\n\r\n'),
      Buffer.from('INVITE sip:+1@127.0.0.1 SIP/2.0\r\nVia: nonsense\r\nCSeq: x\r\n\r\n'),
      Buffer.from(
        'SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 1.2.3.4;branch=z9hG4bKx\r\nCall-ID: a\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:b@c>\r\nCSeq: 1 INVITE\r\n\r\n',
      ),
      Buffer.from(
        `INVITE sip:${fx.openNumber}@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKy\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:b@c>\r\nCall-ID: j1\r\nCSeq: 1 INVITE\r\nContact: <sip:a@127.0.0.1:9>\r\nContent-Type: application/sdp\r\nContent-Length: 12\r\n\r\nv=0\r\nnonsense`,
      ),
      Buffer.alloc(4000, 0x41),
    ];
    for (const j of junk) s.send(j, fx.sipPort, '127.0.0.1');
    s.close();
    ok(await runSipp({ scenario: 'uac-options.xml', target }));
    expect(fx.svc.ua.pendingInviteCount).toBe(0);
  });
});
