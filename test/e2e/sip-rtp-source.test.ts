// RTP source validation end to end: a real SIP call from SIPp; a third party that knows
// the gateway's RTP port sends first. The caller's audio still reaches the session, the intruder's
// packets are counted as strays until the caller's source settles (then the kernel drops them: the
// leg's socket is connected to the caller), and the gateway sends its audio to the caller.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import { startTelephonyFixture, startSipp, eventually, attachedBeforeSippEnds, type TelephonyFixture } from '../helpers/sip-harness.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode } from '../../src/media/g711.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
});
afterAll(async () => {
  await fx?.stop();
});

const dc = (v: number) => new Int16Array(160).fill(v);
const mean = (f: Int16Array) => f.reduce((a, s) => a + s, 0) / f.length;

async function udp(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

describe('RTP source validation', () => {
  it("keeps the caller's audio when a third party sends to the RTP port first", async () => {
    const sessionId = await fx.createSession({ phoneNumber: fx.openNumber });
    const caller = await udp();
    const intruder = await udp();
    const attached = fx.sessions.nextLeg();
    const sipp = await startSipp({
      scenario: 'uac-call-remote-bye.xml',
      target: `127.0.0.1:${fx.sipPort}`,
      service: fx.openNumber,
      keys: { rtp_port: String(caller.address().port) },
    });
    const rec = await attachedBeforeSippEnds(attached, sipp);
    const leg = rec.leg as SipLeg;

    // The intruder's audio is a negative level, the caller's a positive one: the session tells them apart.
    const intruderAudio = alawEncode(dc(-6000));
    const callerAudio = alawEncode(dc(5000));
    for (let i = 0; i < 5; i++)
      intruder.send(
        serializeRtp({ marker: i === 0, payloadType: 8, sequence: i, timestamp: i * 160, ssrc: 666, payload: intruderAudio }),
        leg.rtpPort,
        '127.0.0.1',
      );
    await eventually(() => leg.rtpStats.packetsIn + leg.rtpStats.ignoredSource >= 5 || undefined);

    const toCaller: number[] = [];
    caller.on('message', (m) => {
      if (parseRtp(m)) toCaller.push(1);
    });
    for (let i = 0; i < 30; i++) {
      caller.send(
        serializeRtp({ marker: i === 0, payloadType: 8, sequence: 100 + i, timestamp: 32000 + i * 160, ssrc: 42, payload: callerAudio }),
        leg.rtpPort,
        '127.0.0.1',
      );
      intruder.send(
        serializeRtp({ marker: false, payloadType: 8, sequence: 5 + i, timestamp: (5 + i) * 160, ssrc: 666, payload: intruderAudio }),
        leg.rtpPort,
        '127.0.0.1',
      );
    }
    await eventually(() => rec.frames.some((f) => mean(f) > 4000) || undefined);
    // Once the signalled source has spoken, nothing of the intruder's is played any more.
    await eventually(() => leg.rtpStats.ignoredSource >= 30 || undefined);
    // Settled on the signalled source, the leg's socket is connected to it (MEDIA_IO_CONNECT, on by
    // default): what the intruder sends from now on is dropped by the kernel, before the caller's next packets.
    const strays = leg.rtpStats.ignoredSource;
    const packetsIn = leg.rtpStats.packetsIn;
    for (let i = 0; i < 10; i++)
      intruder.send(
        serializeRtp({ marker: false, payloadType: 8, sequence: 35 + i, timestamp: (35 + i) * 160, ssrc: 666, payload: intruderAudio }),
        leg.rtpPort,
        '127.0.0.1',
      );
    for (let i = 0; i < 5; i++)
      caller.send(
        serializeRtp({ marker: false, payloadType: 8, sequence: 130 + i, timestamp: 32000 + (30 + i) * 160, ssrc: 42, payload: callerAudio }),
        leg.rtpPort,
        '127.0.0.1',
      );
    await eventually(() => leg.rtpStats.packetsIn >= packetsIn + 5 || undefined);
    expect(leg.rtpStats.ignoredSource).toBe(strays);
    leg.playFrame(dc(1000));
    await eventually(() => toCaller.length > 0 || undefined);

    leg.close('test_hangup');
    await sipp.done;
    caller.close();
    intruder.close();

    // The leg's quality travels with session.provider.disconnected (additive fields).
    const ended = await eventually(
      async () =>
        (await fx.db.query(`SELECT data FROM webhook_events WHERE type = 'session.provider.disconnected' AND data->>'session_id' = $1`, [sessionId])).rows[0],
    );
    const q = ended.data.provider.quality;
    expect(q.packets_received).toBeGreaterThanOrEqual(30);
    expect(q.packets_lost).toBe(0);
    expect(q.packets_sent).toBeGreaterThan(0);
    expect(q.mos).toBeGreaterThan(4);
    expect(q.rtcp).toMatchObject({ mux: false });
  });
});
