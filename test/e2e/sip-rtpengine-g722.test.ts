// Wideband callers: no well-kept G.722 codec is on npm, so rtpengine (Debian's build links
// libavcodec, which has G.722) transcodes. A SIPp caller offering only G.722 (static payload type 9)
// is answered G.722 by rtpengine while the gateway's own endpoint speaks PCMU; G.722 packets from the
// caller reach the session as decoded PCMU audio, and the gateway's PCMU reaches the caller as G.722.
// Dial-out offers G.722 too (after PCMU and PCMA): a callee that answers G.722 only is carried the same way.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { startTelephonyFixture, startSipp, eventually, attachedBeforeSippEnds, type TelephonyFixture } from '../helpers/sip-harness.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { parseSdp } from '../../src/telephony/sdp/sdp.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

let rtpengine: RtpengineHandle;
let fx: TelephonyFixture;

beforeAll(async () => {
  rtpengine = await startRtpengine();
  fx = await startTelephonyFixture({ rtpengineNg: rtpengine.ng });
});
afterAll(async () => {
  await fx?.stop();
  await rtpengine?.stop();
});

const rms = (f: Int16Array) => Math.sqrt(f.reduce((a, s) => a + s * s, 0) / f.length);
function tone(amplitude: number): Int16Array {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return f;
}

describe('G.722 through rtpengine', () => {
  it("answers a G.722-only caller and transcodes both ways to the gateway's PCMU", async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((r) => peer.bind(0, '127.0.0.1', () => r()));
    const attached = fx.sessions.nextLeg();
    const sipp = await startSipp({
      scenario: 'uac-call-g722.xml',
      target: `127.0.0.1:${fx.sipPort}`,
      service: fx.openNumber,
      keys: { rtp_port: String(peer.address().port) },
    });
    const rec = await attachedBeforeSippEnds(attached, sipp);
    const leg = rec.leg as SipLeg;
    expect(leg.codec).toBe('PCMU');
    // The caller's answer (from rtpengine) keeps G.722.
    const toCaller = parseSdp(leg.dialog.localSdp).audio!;
    expect(toCaller.payloadTypes[0]).toBe(9);
    expect(toCaller.port).toBeGreaterThanOrEqual(rtpengine.portMin);

    const g722In: number[] = [];
    peer.on('message', (m) => {
      const p = parseRtp(m);
      if (p?.payloadType === 9) g722In.push(p.payload.length);
    });
    // G.722 at 64 kbit/s: 160 bytes per 20 ms. Any byte string is valid G.722 (ADPCM code words) and
    // decodes to audible noise; silence would decode near zero. So energy at the gateway proves decoding.
    let seq = 0;
    const sender = setInterval(() => {
      peer.send(
        serializeRtp({ marker: seq === 0, payloadType: 9, sequence: seq, timestamp: seq * 160, ssrc: 9, payload: randomBytes(160) }),
        toCaller.port,
        '127.0.0.1',
      );
      seq++;
    }, 20);
    try {
      await eventually(() => rec.frames.some((f) => rms(f) > 1000));
      for (let i = 0; i < 25; i++) leg.playFrame(tone(6000));
      await eventually(() => g722In.length >= 10 || undefined);
    } finally {
      clearInterval(sender);
    }
    expect(new Set(g722In)).toEqual(new Set([160]));
    leg.close('test_done');
    const done = await sipp.done;
    expect(done.code, `${done.errors}\n${done.stderr}`).toBe(0);
    peer.close();
  }, 60_000);

  it('offers G.722 on dial-out and transcodes both ways for a callee that answers G.722 only', async () => {
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((r) => peer.bind(0, '127.0.0.1', () => r()));
    // The scenario fails the call unless the INVITE's offer names G722/8000.
    const callee = await startSipp({ scenario: 'uas-answer-g722.xml', keys: { rtp_port: String(peer.address().port) } });
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}` } } });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, {});
    const rec = await attached;
    const leg = rec.leg as SipLeg;
    expect(leg.codec).toBe('PCMU');
    // What rtpengine offered the callee: PCMU first (the gateway's own codec), then PCMA and G.722.
    const offered = parseSdp(leg.dialog.localSdp).audio!;
    expect(offered.payloadTypes.slice(0, 1)).toEqual([0]);
    expect(offered.payloadTypes).toContain(8);
    expect(offered.payloadTypes).toContain(9);
    expect(offered.port).toBeGreaterThanOrEqual(rtpengine.portMin);
    expect(parseSdp(leg.dialog.remoteSdp ?? '').audio?.payloadTypes[0]).toBe(9);

    const g722In: number[] = [];
    peer.on('message', (m) => {
      const p = parseRtp(m);
      if (p?.payloadType === 9) g722In.push(p.payload.length);
    });
    let seq = 0;
    const sender = setInterval(() => {
      peer.send(
        serializeRtp({ marker: seq === 0, payloadType: 9, sequence: seq, timestamp: seq * 160, ssrc: 19, payload: randomBytes(160) }),
        offered.port,
        '127.0.0.1',
      );
      seq++;
    }, 20);
    try {
      await eventually(() => rec.frames.some((f) => rms(f) > 1000));
      for (let i = 0; i < 25; i++) leg.playFrame(tone(6000));
      await eventually(() => g722In.length >= 10 || undefined);
    } finally {
      clearInterval(sender);
    }
    expect(new Set(g722In)).toEqual(new Set([160]));
    await fx.svc.hangup(sessionId, fx.orgId, {});
    const done = await callee.done;
    expect(done.code, `${done.errors}\n${done.stderr}`).toBe(0);
    peer.close();
  }, 60_000);
});
