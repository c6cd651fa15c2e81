// Per-connection RTP latching (migration 008, `voxbridge admin connection add|update --rtp-latching`):
// a real SIPp call through a connection of each setting; a stray source on the caller's address
// (another port, as a NAT would rewrite it) sends first, then the SDP's own source.
//   nat        the stray is taken (symmetric RTP: the gateway answers it) until the SDP source shows up
//   signalled  the stray is ignored and counted; the gateway only ever sends to the SDP source
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import { startTelephonyFixture, startSipp, eventually, attachedBeforeSippEnds, type TelephonyFixture } from '../helpers/sip-harness.js';
import * as repo from '../../src/store/telephony-repo.js';
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

async function udp(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

const dc = (v: number) => new Int16Array(160).fill(v);
const mean = (f: Int16Array) => f.reduce((a, s) => a + s, 0) / f.length;

/** A number on a fresh connection with `latching` (set through the update path for 'signalled'). */
async function numberWith(latching: 'nat' | 'signalled'): Promise<string> {
  const conn = await repo.createConnection(fx.db, {
    orgId: fx.orgId,
    provider: 'carrier_a',
    host: '127.0.0.1',
    port: 5060,
    transport: 'udp',
    inboundCidrs: ['127.0.0.0/8'],
  });
  expect(conn.rtp_latching).toBe('nat');
  if (latching !== 'nat') expect((await repo.updateConnection(fx.db, conn.id, { rtpLatching: latching }))?.rtp_latching).toBe(latching);
  const number = `+1888${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`.slice(0, 12);
  await repo.createPhoneNumber(fx.db, { orgId: fx.orgId, number, connectionId: conn.id });
  return number;
}

async function strayThenReal(latching: 'nat' | 'signalled') {
  const number = await numberWith(latching);
  await fx.createSession({ phoneNumber: number });
  const caller = await udp();
  const stray = await udp();
  const attached = fx.sessions.nextLeg();
  const sipp = await startSipp({
    scenario: 'uac-call-remote-bye.xml',
    target: `127.0.0.1:${fx.sipPort}`,
    service: number,
    keys: { rtp_port: String(caller.address().port) },
  });
  const rec = await attachedBeforeSippEnds(attached, sipp);
  const leg = rec.leg as SipLeg;
  const toStray: number[] = [];
  const toCaller: number[] = [];
  stray.on('message', (m) => parseRtp(m) && toStray.push(1));
  caller.on('message', (m) => parseRtp(m) && toCaller.push(1));

  for (let i = 0; i < 5; i++)
    stray.send(
      serializeRtp({ marker: i === 0, payloadType: 8, sequence: i, timestamp: i * 160, ssrc: 77, payload: alawEncode(dc(-6000)) }),
      leg.rtpPort,
      '127.0.0.1',
    );
  await eventually(() => leg.rtpStats.packetsIn + leg.rtpStats.ignoredSource >= 5 || undefined);
  const afterStray = { ...leg.rtpStats };
  // Where the gateway sends now: the stray (NAT latch) or still the SDP source.
  const sentBefore = { stray: toStray.length, caller: toCaller.length };
  await eventually(() => toStray.length + toCaller.length >= sentBefore.stray + sentBefore.caller + 5 || undefined);
  const sentToStrayWhileLatched = toStray.length;

  for (let i = 0; i < 20; i++)
    caller.send(
      serializeRtp({ marker: i === 0, payloadType: 8, sequence: 100 + i, timestamp: 32000 + i * 160, ssrc: 42, payload: alawEncode(dc(5000)) }),
      leg.rtpPort,
      '127.0.0.1',
    );
  await eventually(() => rec.frames.some((f) => mean(f) > 4000) || undefined);
  // The SDP source has the latch now in both settings: the gateway sends to it.
  const callerBefore = toCaller.length;
  await eventually(() => toCaller.length >= callerBefore + 3 || undefined);

  leg.close('test_hangup');
  await sipp.done;
  caller.close();
  stray.close();
  return { afterStray, sentToStrayWhileLatched, strayFramesPlayed: rec.frames.some((f) => mean(f) < -4000) };
}

describe('per-connection RTP latching', () => {
  it("'nat' takes a stray on the caller's address until the SDP source speaks", async () => {
    const r = await strayThenReal('nat');
    expect(r.afterStray.packetsIn).toBe(5);
    expect(r.afterStray.ignoredSource).toBe(0);
    expect(r.sentToStrayWhileLatched).toBeGreaterThan(0);
    expect(r.strayFramesPlayed).toBe(true);
  }, 60_000);

  it("'signalled' ignores the stray and sends only to the SDP source", async () => {
    const r = await strayThenReal('signalled');
    expect(r.afterStray.packetsIn).toBe(0);
    expect(r.afterStray.ignoredSource).toBe(5);
    expect(r.sentToStrayWhileLatched).toBe(0);
    expect(r.strayFramesPlayed).toBe(false);
  }, 60_000);
});
