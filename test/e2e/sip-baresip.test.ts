// Interop with a real softphone: baresip (Debian `baresip-core`) calls the gateway and is called by
// it, audio checked end to end both ways. baresip's microphone is a WAV with a 450 Hz tone; the
// gateway plays 1000 Hz; each side must hear the other's tone (and baresip not its own). The secure
// calls run SIP over TLS with SDES SRTP (terminated by rtpengine). baresip is driven over ctrl_tcp:
// the test waits on its call events and on the audio it has decoded, never on a sleep.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTelephonyFixture, eventually, type TelephonyFixture, type AttachedLegRecord } from '../helpers/sip-harness.js';
import { startBaresip, type Baresip } from '../helpers/baresip.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { makeTestPki, type TestPki } from '../helpers/tls-certs.js';
import * as repo from '../../src/store/telephony-repo.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

const RATE = 8000;
const BARESIP_HZ = 450;
const GATEWAY_HZ = 1000;
/** Half a second of a tone: enough to tell it from noise or a stray frame. */
const HEARD_BLOCKS = 25;

let pki: TestPki;
let rtpengine: RtpengineHandle;
/** Media in-process (no rtpengine): plain RTP calls. */
let fx: TelephonyFixture;
/** rtpengine anchors media: SRTP calls. */
let secureFx: TelephonyFixture;
let micWav: string;
let bothPem: string;
const phones: Baresip[] = [];

function sine(hz: number, samples: number, amplitude: number, phase = 0): Int16Array {
  const f = new Int16Array(samples);
  for (let i = 0; i < samples; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * (phase + i)) / RATE));
  return f;
}

function writeWav(file: string, pcm: Int16Array): void {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + pcm.length * 2, 4);
  h.write('WAVEfmt ', 8, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(RATE, 24);
  h.writeUInt32LE(RATE * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(pcm.length * 2, 40);
  writeFileSync(file, Buffer.concat([h, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
}

/** 20 ms blocks in which `hz` carries most of the energy (Goertzel at a bin centre) and that are not silent. */
function toneBlocks(pcm: Int16Array, hz: number): number {
  const n = 160;
  const coeff = 2 * Math.cos((2 * Math.PI * hz) / RATE);
  let count = 0;
  for (let off = 0; off + n <= pcm.length; off += n) {
    let s1 = 0;
    let s2 = 0;
    let energy = 0;
    for (let i = 0; i < n; i++) {
      const x = pcm[off + i] ?? 0;
      energy += x * x;
      const s0 = x + coeff * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    // A pure tone at the bin centre gives power = energy * n / 2.
    if (energy / n > 500 * 500 && power / ((energy * n) / 2) > 0.5) count++;
  }
  return count;
}

function concat(frames: Int16Array[]): Int16Array {
  const out = new Int16Array(frames.reduce((a, f) => a + f.length, 0));
  let off = 0;
  for (const f of frames) {
    out.set(f, off);
    off += f.length;
  }
  return out;
}

async function phone(o: Parameters<typeof startBaresip>[0]): Promise<Baresip> {
  const p = await startBaresip(o);
  phones.push(p);
  return p;
}

/** Checks both directions of a connected call: the gateway hears baresip's tone, baresip the gateway's. */
async function checkAudio(bs: Baresip, rec: AttachedLegRecord): Promise<void> {
  await eventually(() => toneBlocks(concat(rec.frames), BARESIP_HZ) >= HEARD_BLOCKS, 30_000).catch((e: unknown) => {
    throw new Error(`gateway did not hear baresip's ${BARESIP_HZ} Hz (${rec.frames.length} frames): ${String(e)}\n${bs.log()}`);
  });
  // The gateway speaks in real time, one 20 ms frame per tick, as the session pipeline does.
  let sample = 0;
  const speaker = setInterval(() => {
    rec.leg.playFrame(sine(GATEWAY_HZ, 160, 8000, sample));
    sample += 160;
  }, 20);
  try {
    await eventually(() => toneBlocks(bs.heard(), GATEWAY_HZ) >= HEARD_BLOCKS, 30_000).catch((e: unknown) => {
      throw new Error(`baresip did not hear the gateway's ${GATEWAY_HZ} Hz (${bs.heard().length} samples): ${String(e)}\n${bs.log()}`);
    });
  } finally {
    clearInterval(speaker);
  }
  // What baresip heard is the gateway, not an echo of its own microphone.
  expect(toneBlocks(bs.heard(), BARESIP_HZ)).toBe(0);
}

async function secureNumber(f: TelephonyFixture): Promise<string> {
  const c = await repo.createConnection(f.db, {
    orgId: f.orgId,
    provider: 'carrier_a',
    host: '127.0.0.1',
    port: 5061,
    transport: 'tls',
    inboundCidrs: ['127.0.0.0/8'],
    security: { requireSecure: true },
  });
  const number = `+1888${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
  await repo.createPhoneNumber(f.db, { orgId: f.orgId, number, connectionId: c.id });
  return number;
}

beforeAll(async () => {
  pki = makeTestPki();
  const dir = mkdtempSync(path.join(tmpdir(), 'vb-baresip-'));
  micWav = path.join(dir, 'mic.wav');
  // Longer than any call here: aufile plays the file once.
  writeWav(micWav, sine(BARESIP_HZ, RATE * 120, 8000));
  bothPem = path.join(dir, 'server-both.pem');
  writeFileSync(bothPem, readFileSync(pki.serverCert, 'utf8') + readFileSync(pki.serverKey, 'utf8'));
  rtpengine = await startRtpengine();
  const sip = { tls: { port: 0, certFile: pki.serverCert, keyFile: pki.serverKey, caFile: pki.caFile, verifyServer: true } };
  fx = await startTelephonyFixture({ sip });
  secureFx = await startTelephonyFixture({ rtpengineNg: rtpengine.ng, sip });
});

afterAll(async () => {
  for (const p of phones) await p.stop();
  await fx?.stop();
  await secureFx?.stop();
  await rtpengine?.stop();
});

describe('baresip interop (plain RTP over UDP)', () => {
  it('baresip calls the gateway: audio both ways, baresip hangs up', async () => {
    const bs = await phone({ source: micWav });
    await fx.createSession({ phoneNumber: fx.openNumber });
    const attached = fx.sessions.nextLeg();
    expect((await bs.command('dial', `sip:${fx.openNumber}@127.0.0.1:${fx.sipPort}`)).ok).toBe(true);
    const rec = await attached;
    await bs.nextEvent('CALL_ESTABLISHED');
    expect((rec.leg as SipLeg).dialog.transport).toBe('udp');
    await checkAudio(bs, rec);
    expect((await bs.command('hangup')).ok).toBe(true);
    await bs.nextEvent('CALL_CLOSED');
    await eventually(() => rec.detached);
  });

  it('the gateway calls baresip: audio both ways, the gateway hangs up', async () => {
    const bs = await phone({ source: micWav });
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:bs@127.0.0.1:${bs.sipPort}` } } });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, {});
    const rec = await attached;
    const incoming = await bs.nextEvent('CALL_ESTABLISHED');
    expect(incoming.direction).toBe('incoming');
    await checkAudio(bs, rec);
    await fx.svc.hangup(sessionId, fx.orgId, {});
    const closed = await bs.nextEvent('CALL_CLOSED');
    expect(closed.id).toBe(incoming.id);
  });
});

describe('baresip interop over TLS with SDES SRTP', () => {
  it('baresip calls over TLS with SRTP required: audio both ways; the gateway hangs up over the caller’s TLS connection', async () => {
    // No certificate: baresip cannot accept a TLS connection, so the gateway's BYE can only reach it
    // over the connection baresip opened (connection reuse).
    const bs = await phone({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile });
    const number = await secureNumber(secureFx);
    await secureFx.createSession({ phoneNumber: number });
    const attached = secureFx.sessions.nextLeg();
    expect((await bs.command('dial', `sip:${number}@127.0.0.1:${secureFx.svc.ua.tlsPort}`)).ok).toBe(true);
    const rec = await attached;
    await bs.nextEvent('CALL_ESTABLISHED');
    const leg = rec.leg as SipLeg;
    expect(leg.dialog.transport).toBe('tls');
    expect(leg.dialog.localSdp).toMatch(/^m=audio \d+ RTP\/SAVP /m);
    expect(leg.dialog.localSdp).toMatch(/^a=crypto:\d+ AES_CM_128_HMAC_SHA1_(80|32) inline:/m);
    await checkAudio(bs, rec);
    expect(bs.log()).toMatch(/SRTP is Enabled/);
    leg.close('test_done');
    await bs.nextEvent('CALL_CLOSED');
  });

  it('the gateway calls baresip over TLS through a connection that requires SRTP: audio both ways, baresip hangs up', async () => {
    const bs = await phone({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile, certificate: bothPem, user: '+14155550123' });
    const c = await repo.createConnection(secureFx.db, {
      orgId: secureFx.orgId,
      provider: 'carrier_b',
      host: '127.0.0.1',
      port: bs.tlsPort,
      transport: 'tls',
      inboundCidrs: [],
      security: { requireSecure: true },
    });
    const sessionId = await secureFx.createSession({ routing: { connection_id: c.id } });
    const attached = secureFx.sessions.nextLeg();
    await secureFx.svc.dial(sessionId, secureFx.orgId, { to: '+14155550123' });
    const rec = await attached;
    await bs.nextEvent('CALL_ESTABLISHED');
    const leg = rec.leg as SipLeg;
    expect(leg.dialog.transport).toBe('tls');
    expect(leg.dialog.remoteSdp).toMatch(/^m=audio \d+ RTP\/SAVP /m);
    await checkAudio(bs, rec);
    expect(bs.log()).toMatch(/SRTP is Enabled/);
    expect((await bs.command('hangup')).ok).toBe(true);
    await bs.nextEvent('CALL_CLOSED');
    await eventually(() => rec.detached);
  });
});
