// Secure trunks: SIP over TLS in both directions, SRTP (SDES) ended at rtpengine,
// mutual TLS per connection, and connections that require TLS + SRTP. SIPp has no TLS in Debian's
// build, so it speaks TCP into a real TLS hop (test/helpers/tls-tunnel.ts); certificates are made
// with openssl at test time (test/helpers/tls-certs.ts).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startTelephonyFixture, startSipp, freePort, eventually, attachedBeforeSippEnds, type TelephonyFixture } from '../helpers/sip-harness.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { makeTestPki, type TestPki } from '../helpers/tls-certs.js';
import { tlsClientTunnel, tlsServerTunnel, type Tunnel } from '../helpers/tls-tunnel.js';
import * as repo from '../../src/store/telephony-repo.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';
import dgram from 'node:dgram';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { mulawDecode, mulawEncode } from '../../src/media/g711.js';
import { protect, srtpContext, unprotect } from '../helpers/srtp.js';

let pki: TestPki;
let rtpengine: RtpengineHandle;
let fx: TelephonyFixture;
/** Same TLS listener, no rtpengine: SRTP offers cannot be answered. */
let plainFx: TelephonyFixture;
const tunnels: Tunnel[] = [];

const tlsConfig = () => ({ tls: { port: 0, certFile: pki.serverCert, keyFile: pki.serverKey, caFile: pki.caFile, verifyServer: true } });
const ok = (r: { code: number; errors: string; stderr: string }) => expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);
const crypto = () => `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${randomBytes(30).toString('base64')}`;
const rms = (f: Int16Array) => Math.sqrt(f.reduce((a, v) => a + v * v, 0) / f.length);
function tone(amplitude: number): Int16Array {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return f;
}
const PLAIN = { profile: 'RTP/AVP', crypto: 'a=ptime:20' };
const SRTP = () => ({ profile: 'RTP/SAVP', crypto: crypto() });

async function numberOn(f: TelephonyFixture, security: repo.ConnectionSecurity, transport: 'udp' | 'tls' = 'tls'): Promise<string> {
  const c = await repo.createConnection(f.db, {
    orgId: f.orgId,
    provider: 'carrier_a',
    host: '127.0.0.1',
    port: 5061,
    transport,
    inboundCidrs: ['127.0.0.0/8'],
    security,
  });
  const number = `+1888${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
  await repo.createPhoneNumber(f.db, { orgId: f.orgId, number, connectionId: c.id });
  return number;
}

async function tunnelTo(f: TelephonyFixture, client?: 'good' | 'rogue'): Promise<Tunnel> {
  const cert = client === 'good' ? { cert: pki.clientCert, key: pki.clientKey } : client === 'rogue' ? { cert: pki.rogueCert, key: pki.rogueKey } : {};
  const t = await tlsClientTunnel({ target: f.svc.ua.tlsPort!, caFile: pki.caFile, ...cert });
  tunnels.push(t);
  return t;
}

/** A call into `number` over TLS; resolves with the SIPp result and what the gateway sent back. */
async function callOverTls(f: TelephonyFixture, number: string, keys: Record<string, string>, o: { scenario?: string; client?: 'good' | 'rogue' } = {}) {
  const t = await tunnelTo(f, o.client);
  const sipp = await startSipp({
    scenario: o.scenario ?? 'uac-secure-call.xml',
    target: `127.0.0.1:${t.port}`,
    service: number,
    transport: 't1',
    durationMs: 300,
    keys,
  });
  return { tunnel: t, result: await sipp.done };
}

beforeAll(async () => {
  pki = makeTestPki();
  rtpengine = await startRtpengine();
  fx = await startTelephonyFixture({ rtpengineNg: rtpengine.ng, sip: tlsConfig() });
  plainFx = await startTelephonyFixture({ sip: tlsConfig() });
});
afterAll(async () => {
  for (const t of tunnels) await t.close();
  await fx?.stop();
  await plainFx?.stop();
  await rtpengine?.stop();
});

describe('SIP over TLS', () => {
  it('takes a call over TLS: TLS in Via, a ;transport=tls Contact on the TLS port (the request was sip:), the dialog on TLS', async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const attached = fx.sessions.nextLeg();
    const call = callOverTls(fx, fx.openNumber, PLAIN);
    const leg = (await attached).leg as SipLeg;
    expect(leg.dialog.transport).toBe('tls');
    const { tunnel, result } = await call;
    ok(result);
    const answer = tunnel.fromGateway();
    expect(answer).toMatch(/^SIP\/2\.0 200 OK/m);
    expect(answer).toMatch(/^Via: SIP\/2\.0\/TLS /m);
    expect(answer).toContain(`<sip:voxbridge@127.0.0.1:${fx.svc.ua.tlsPort};transport=tls>`);
  });

  it('dials out over TLS to a sips: target and hangs up over TLS', async () => {
    // The callee's Contact names the tunnel in front of it (a key), so the tunnel comes first.
    const sippPort = await freePort();
    const t = await tlsServerTunnel({ target: sippPort, cert: pki.serverCert, key: pki.serverKey });
    tunnels.push(t);
    const callee2 = await startSipp({ scenario: 'uas-answer-tls.xml', transport: 't1', port: sippPort, keys: { ...PLAIN, tls_port: String(t.port) } });
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sips:callee@127.0.0.1:${t.port}` } } });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, {});
    const leg = (await attached).leg as SipLeg;
    expect(leg.dialog.transport).toBe('tls');
    await fx.svc.hangup(sessionId, fx.orgId, {});
    ok(await callee2.done);
    const sent = t.fromGateway();
    expect(sent).toMatch(/^INVITE sips:callee@127\.0\.0\.1:\d+ SIP\/2\.0/m);
    expect(sent).toMatch(/^Via: SIP\/2\.0\/TLS 127\.0\.0\.1:\d+;/m);
    expect(sent).toMatch(/^BYE sips:callee@/m);
  });
});

describe('SRTP (SDES) through rtpengine', () => {
  it('answers an RTP/SAVP offer with a=crypto from rtpengine while the gateway side stays plain PCMU', async () => {
    const number = await numberOn(fx, { requireSecure: true });
    await fx.createSession({ phoneNumber: number });
    const attached = fx.sessions.nextLeg();
    const call = callOverTls(fx, number, SRTP());
    const leg = (await attached).leg as SipLeg;
    expect(leg.codec).toBe('PCMU');
    // What the caller got: SRTP keyed by rtpengine's own a=crypto, on an rtpengine port.
    expect(leg.dialog.localSdp).toMatch(/^m=audio (\d+) RTP\/SAVP /m);
    expect(leg.dialog.localSdp).toMatch(/^a=crypto:\d+ AES_CM_128_HMAC_SHA1_(80|32) inline:/m);
    const port = Number(/^m=audio (\d+)/m.exec(leg.dialog.localSdp)?.[1]);
    expect(port).toBeGreaterThanOrEqual(rtpengine.portMin);
    expect(port).toBeLessThanOrEqual(rtpengine.portMax);
    ok((await call).result);
  });

  it("carries decodable audio both ways: the caller's SRTP reaches the gateway as PCMU, the gateway's reaches the caller as SRTP", async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const peer = dgram.createSocket('udp4');
    await new Promise<void>((r) => peer.bind(0, '127.0.0.1', () => r()));
    const key = randomBytes(30).toString('base64');
    const attached = fx.sessions.nextLeg();
    const sipp = await startSipp({
      scenario: 'uac-secure-call-remote-bye.xml',
      target: `127.0.0.1:${fx.sipPort}`,
      service: fx.openNumber,
      keys: { rtp_port: String(peer.address().port), codecs: '0 101', profile: 'RTP/SAVP', crypto: `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}` },
    });
    const rec = await attachedBeforeSippEnds(attached, sipp);
    const leg = rec.leg as SipLeg;
    const answer = leg.dialog.localSdp;
    const port = Number(/^m=audio (\d+) RTP\/SAVP /m.exec(answer)?.[1]);
    const theirKey = /^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:([A-Za-z0-9+/=]+)/m.exec(answer)?.[1];
    expect(port).toBeGreaterThan(0);
    expect(theirKey).toBeTruthy();
    const toRtpengine = srtpContext(key);
    const fromRtpengine = srtpContext(theirKey!);
    const heard: number[] = [];
    let undecryptable = 0;
    peer.on('message', (m) => {
      const rtp = unprotect(fromRtpengine, m);
      if (!rtp) return void undecryptable++;
      const p = parseRtp(rtp);
      if (p?.payloadType === 0) heard.push(rms(mulawDecode(p.payload)));
    });
    const payload = mulawEncode(tone(8000));
    let seq = 0;
    const sender = setInterval(() => {
      const rtp = serializeRtp({ marker: seq === 0, payloadType: 0, sequence: seq, timestamp: seq * 160, ssrc: 0x1234, payload });
      peer.send(protect(toRtpengine, rtp), port, '127.0.0.1');
      seq++;
    }, 20);
    try {
      await eventually(() => rec.frames.some((f) => rms(f) > 3000));
      for (let i = 0; i < 25; i++) leg.playFrame(tone(6000));
      await eventually(() => heard.some((v) => v > 3000));
    } finally {
      clearInterval(sender);
    }
    expect(undecryptable).toBe(0);
    leg.close('test_done');
    ok(await sipp.done);
    peer.close();
  });

  it('offers RTP/SAVP with a=crypto when dialing a connection that requires secure calls', async () => {
    const calleeKeys = SRTP();
    const sippPort = await freePort();
    const t = await tlsServerTunnel({ target: sippPort, cert: pki.serverCert, key: pki.serverKey });
    tunnels.push(t);
    const callee = await startSipp({ scenario: 'uas-answer-tls.xml', transport: 't1', port: sippPort, keys: { ...calleeKeys, tls_port: String(t.port) } });
    const c = await repo.createConnection(fx.db, {
      orgId: fx.orgId,
      provider: 'carrier_b',
      host: '127.0.0.1',
      port: t.port,
      transport: 'tls',
      inboundCidrs: [],
      security: { requireSecure: true },
    });
    const sessionId = await fx.createSession({ routing: { connection_id: c.id } });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, { to: '+14155550100' });
    const leg = (await attached).leg as SipLeg;
    expect(leg.codec).toBe('PCMU');
    await fx.svc.hangup(sessionId, fx.orgId, {});
    ok(await callee.done);
    const invite = t.fromGateway().split(/^ACK /m)[0] ?? '';
    expect(invite).toMatch(/^INVITE sip:\+14155550100@127\.0\.0\.1:\d+;transport=tls SIP\/2\.0/m);
    expect(invite).toMatch(/^m=audio \d+ RTP\/SAVP /m);
    expect(invite).toMatch(/^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:/m);
    // Only RFC 4568's AES_CM_128 suites: never a NULL cipher, nor suites peers key differently.
    expect(invite.match(/^a=crypto:\d+ (\S+) /gm)?.map((l) => l.split(' ')[1])).toEqual(['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32']);
  });

  it('without rtpengine refuses an SRTP offer with 488 instead of ignoring the crypto', async () => {
    await plainFx.createSession({ phoneNumber: plainFx.openNumber });
    const { tunnel, result } = await callOverTls(plainFx, plainFx.openNumber, SRTP(), { scenario: 'uac-secure-refused.xml' });
    ok(result);
    expect(tunnel.fromGateway()).toMatch(/^SIP\/2\.0 488 Not Acceptable Here \(SRTP not available\)/m);
  });
});

describe('connections that require TLS + SRTP', () => {
  it('refuses a call over UDP with 403 naming TLS', async () => {
    const number = await numberOn(fx, { requireSecure: true });
    await fx.createSession({ phoneNumber: number });
    const before = fx.svc.callCounts['inbound:rejected_403'] ?? 0;
    const r = await (await startSipp({ scenario: 'uac-secure-refused.xml', target: `127.0.0.1:${fx.sipPort}`, service: number, keys: SRTP() })).done;
    ok(r);
    expect(fx.svc.callCounts['inbound:rejected_403']).toBe(before + 1);
  });

  it('refuses a call over TLS without SRTP with 488 naming SRTP', async () => {
    const number = await numberOn(fx, { requireSecure: true });
    await fx.createSession({ phoneNumber: number });
    const { tunnel, result } = await callOverTls(fx, number, PLAIN, { scenario: 'uac-secure-refused.xml' });
    ok(result);
    expect(tunnel.fromGateway()).toMatch(/^SIP\/2\.0 488 Not Acceptable Here \(SRTP Required\)/m);
  });
});

describe('mutual TLS per connection', () => {
  let number: string;
  beforeAll(async () => {
    number = await numberOn(fx, { requireClientCert: true, tlsClientCa: readFileSync(pki.caFile, 'utf8'), tlsClientSubject: 'carrier.test' });
  });

  it('accepts a client certificate from the connection CA with the right subject', async () => {
    await fx.createSession({ phoneNumber: number });
    const attached = fx.sessions.nextLeg();
    const call = callOverTls(fx, number, PLAIN, { client: 'good' });
    await attached;
    ok((await call).result);
  });

  it('refuses a certificate from another CA, and a caller without one', async () => {
    await fx.createSession({ phoneNumber: number });
    const rogue = await callOverTls(fx, number, PLAIN, { scenario: 'uac-secure-refused.xml', client: 'rogue' });
    ok(rogue.result);
    expect(rogue.tunnel.fromGateway()).toMatch(/^SIP\/2\.0 403 Forbidden \(Client Certificate Not Trusted\)/m);
    const none = await callOverTls(fx, number, PLAIN, { scenario: 'uac-secure-refused.xml' });
    ok(none.result);
    expect(none.tunnel.fromGateway()).toMatch(/^SIP\/2\.0 403 Forbidden \(Client Certificate Required\)/m);
  });
});
