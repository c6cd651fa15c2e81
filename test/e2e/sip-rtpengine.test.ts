// The same calls with rtpengine anchoring media (userspace, loopback): the caller speaks PCMA to
// rtpengine, which transcodes so the gateway's endpoint only sees PCMU; audio flows both ways.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import { startTelephonyFixture, startSipp, eventually, attachedBeforeSippEnds, type TelephonyFixture } from '../helpers/sip-harness.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { parseSdp } from '../../src/telephony/sdp/sdp.js';
import { alawEncode, alawDecode, mulawDecode } from '../../src/media/g711.js';
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

const ok = (r: { code: number; errors: string; stderr: string }) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);
const rms = (f: Int16Array) => Math.sqrt(f.reduce((a, s) => a + s * s, 0) / f.length);
function tone(amplitude: number): Int16Array {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return f;
}

async function udpPeer(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

describe('SIP with rtpengine', () => {
  it('anchors an inbound PCMA call, transcoding to PCMU for the gateway, media both ways', async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const peer = await udpPeer();
    const attached = fx.sessions.nextLeg();
    const sipp = await startSipp({
      scenario: 'uac-call-remote-bye.xml',
      target: `127.0.0.1:${fx.sipPort}`,
      service: fx.openNumber,
      keys: { rtp_port: String(peer.address().port), codecs: '8 101' },
    });
    const rec = await attachedBeforeSippEnds(attached, sipp);
    const leg = rec.leg as SipLeg;
    expect(leg.codec).toBe('PCMU');
    // The caller talks to rtpengine, not to the gateway.
    const toCaller = parseSdp(leg.dialog.localSdp).audio!;
    expect(toCaller.port).toBeGreaterThanOrEqual(rtpengine.portMin);
    expect(toCaller.port).toBeLessThanOrEqual(rtpengine.portMax);
    expect(toCaller.payloadTypes[0]).toBe(8);

    const heard: number[] = [];
    peer.on('message', (m) => {
      const p = parseRtp(m);
      if (p?.payloadType === 8) heard.push(rms(alawDecode(p.payload)));
    });
    const payload = alawEncode(tone(8000));
    let seq = 0;
    const sender = setInterval(() => {
      peer.send(serializeRtp({ marker: seq === 0, payloadType: 8, sequence: seq, timestamp: seq * 160, ssrc: 7, payload }), toCaller.port, '127.0.0.1');
      seq++;
    }, 20);
    try {
      await eventually(() => rec.frames.some((f) => rms(f) > 3000));
      for (let i = 0; i < 25; i++) leg.playFrame(tone(6000));
      await eventually(() => heard.some((v) => v > 3000));
    } finally {
      clearInterval(sender);
    }
    leg.close('test_done');
    ok(await sipp.done);
    peer.close();
  });

  it('re-anchors a hold and resume, takes a late offer and the caller BYE through rtpengine', async () => {
    const target = `127.0.0.1:${fx.sipPort}`;
    await fx.createSession({ phoneNumber: fx.openNumber });
    let attached = fx.sessions.nextLeg();
    const hold = startSipp({ scenario: 'uac-call-hold.xml', target, service: fx.openNumber, keys: { codecs: '8 101' } });
    const leg = (await attached).leg as SipLeg;
    const holds: boolean[] = [];
    leg.on('hold', (h) => holds.push(h));
    ok(await (await hold).done);
    expect(holds).toEqual([true, false]);

    await fx.createSession({ phoneNumber: fx.openNumber });
    attached = fx.sessions.nextLeg();
    const late = startSipp({ scenario: 'uac-call-late-offer.xml', target, service: fx.openNumber, durationMs: 200 });
    const rec = await attached;
    expect((rec.leg as SipLeg).codec).toBe('PCMU');
    ok(await (await late).done);
    await eventually(() => rec.detached === 'remote_hangup');
  });

  it('dials out through rtpengine and carries media to the callee', async () => {
    const peer = await udpPeer();
    const callee = await startSipp({ scenario: 'uas-answer.xml', keys: { rtp_port: String(peer.address().port) } });
    const sessionId = await fx.createSession({
      routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${callee.port}`, headers: { 'X-Voxbridge-Test': 'rtpengine' } } },
    });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, {});
    const leg = (await attached).leg as SipLeg;
    expect(leg.codec).toBe('PCMU');
    const heard: number[] = [];
    peer.on('message', (m) => {
      const p = parseRtp(m);
      if (p?.payloadType === 0) heard.push(rms(mulawDecode(p.payload)));
    });
    for (let i = 0; i < 25; i++) leg.playFrame(tone(6000));
    await eventually(() => heard.some((v) => v > 3000));
    await fx.svc.hangup(sessionId, fx.orgId, {});
    ok(await callee.done);
    peer.close();
  });
});
