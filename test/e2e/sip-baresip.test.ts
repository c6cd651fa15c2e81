// Interop with a real softphone: baresip (Debian `baresip-core`) calls the gateway and is called by
// it, audio checked end to end both ways. baresip's microphone is a WAV with a 450 Hz tone; the
// gateway plays 1000 Hz; each side must hear the other's tone (and baresip not its own). The secure
// calls run SIP over TLS with SDES SRTP (terminated by rtpengine). baresip is driven over ctrl_tcp:
// the test waits on its call events and on the audio it has decoded, never on a sleep.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTelephonyFixture, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import { startBaresip, sine, writeWav, checkAudio, BARESIP_HZ, RATE, type Baresip } from '../helpers/baresip.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { makeTestPki, type TestPki } from '../helpers/tls-certs.js';
import * as repo from '../../src/store/telephony-repo.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

let pki: TestPki;
let rtpengine: RtpengineHandle;
/** Media in-process (no rtpengine): plain RTP calls. */
let fx: TelephonyFixture;
/** rtpengine anchors media: SRTP calls. */
let secureFx: TelephonyFixture;
let micWav: string;
let bothPem: string;
const phones: Baresip[] = [];

async function phone(o: Parameters<typeof startBaresip>[0]): Promise<Baresip> {
  const p = await startBaresip(o);
  phones.push(p);
  return p;
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
