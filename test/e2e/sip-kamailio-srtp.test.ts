// SRTP media through the Kamailio edge, end to end with a real softphone: baresip calls over TLS
// with SDES SRTP required (`mediaenc=srtp-mand`); the edge (sip/kamailio/) terminates TLS and its
// rtpengine terminates SRTP, so the node behind it (no rtpengine of its own, trusting only the edge)
// gets plain RTP/AVP over UDP. Each side must hear the other's tone and baresip never its own, also
// after a session refresh re-INVITE from the node; a hold and resume from the node cross the edge
// with SRTP kept on baresip's side, and baresip's own hold and resume reach the node as RTP/AVP.
// (After a hold baresip 1.0 restarts its player without the sndfile filter, so what it hears after a
// resume cannot be recorded: the refresh covers that direction.)
// With a client certificate from the trunk's CA baresip calls through the edge's mutual-TLS trunk
// port to a number whose connection requires one; without a certificate it never gets through.
// A node that dials out through the edge (SIP_EDGE_OUTBOUND_PROXY) reaches baresip over TLS with
// SRTP offered by the edge's rtpengine.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTelephonyFixture, eventually, freePort, type TelephonyFixture } from '../helpers/sip-harness.js';
import { startBaresip, sine, writeWav, checkAudio, gatewayHearsBaresip, BARESIP_HZ, RATE, type Baresip } from '../helpers/baresip.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { addMtlsTrunkNumber, addSecureTrunkNumber, startKamailio, type KamailioHandle } from '../helpers/kamailio.js';
import { makeTestPki, type TestPki } from '../helpers/tls-certs.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

let pki: TestPki;
let rtpengine: RtpengineHandle;
let fx: TelephonyFixture;
let edge: KamailioHandle;
let micWav: string;
/** baresip's client certificate and key in one PEM (issued by the trunk's CA, subject carrier.test). */
let clientPem: string;
/** The server certificate and key in one PEM: baresip then accepts TLS connections (the edge dialling it). */
let serverPem: string;
/** A certificate and key from another CA: a carrier the edge must not trust. */
let roguePem: string;
/** A number whose connection requires a client certificate from the test CA with subject carrier.test. */
let mtlsNumber: string;
/** A number whose connection requires TLS and SRTP (`--require-secure`). */
let secureNumber: string;
const phones: Baresip[] = [];

beforeAll(async () => {
  pki = makeTestPki();
  const dir = mkdtempSync(path.join(tmpdir(), 'vb-edge-srtp-'));
  micWav = path.join(dir, 'mic.wav');
  serverPem = path.join(dir, 'server-both.pem');
  writeFileSync(serverPem, readFileSync(pki.serverCert, 'utf8') + readFileSync(pki.serverKey, 'utf8'));
  roguePem = path.join(dir, 'rogue-both.pem');
  writeFileSync(roguePem, readFileSync(pki.rogueCert, 'utf8') + readFileSync(pki.rogueKey, 'utf8'));
  clientPem = path.join(dir, 'client-both.pem');
  writeFileSync(clientPem, readFileSync(pki.clientCert, 'utf8') + readFileSync(pki.clientKey, 'utf8'));
  // Longer than any call here: aufile plays the file once.
  writeWav(micWav, sine(BARESIP_HZ, RATE * 120, 8000));
  rtpengine = await startRtpengine();
  // The node: UDP only, no rtpengine (the edge's anchors every call), SIP only from the edge.
  // It dials out through the edge too (SIP_EDGE_OUTBOUND_PROXY), so the edge's port is chosen first.
  const edgePort = await freePort();
  fx = await startTelephonyFixture({
    sip: { transports: ['udp'], trustedEdge: { cidrs: ['127.0.0.1/32'], sourceHeader: 'X-VB-Source', outboundProxy: `127.0.0.1:${edgePort}` } },
  });
  mtlsNumber = await addMtlsTrunkNumber(fx, pki.caFile);
  secureNumber = await addSecureTrunkNumber(fx);
  // One mutual-TLS trunk port: a client certificate from the test CA is required there.
  edge = await startKamailio({
    nodes: [`127.0.0.1:${fx.sipPort}`],
    port: edgePort,
    rtpengine: rtpengine.ng,
    // Carriers dialled over TLS must present a certificate from the test CA (baresip's serverPem does).
    tls: { cert: pki.serverCert, key: pki.serverKey, trunkCas: [pki.caFile], carrierCa: pki.caFile },
  });
}, 90_000);

afterAll(async () => {
  for (const p of phones) await p.stop();
  await edge?.stop();
  await fx?.stop();
  await rtpengine?.stop();
});

/** The node's SDP with a new origin version and `direction` (RFC 3264 §8: a changed offer bumps o=). */
function reoffer(sdp: string, direction: 'sendonly' | 'sendrecv'): string {
  const bumped = sdp.replace(/^(o=\S+ \S+ )(\d+)/m, (_m, head: string, v: string) => `${head}${Number(v) + 1}`);
  const lines = bumped.split('\r\n').filter((l) => !/^a=(sendrecv|sendonly|recvonly|inactive)$/.test(l));
  const end = lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
  lines.splice(end, 0, `a=${direction}`);
  return lines.join('\r\n');
}

describe('SRTP media through the Kamailio edge (baresip over TLS)', () => {
  it('baresip → edge (TLS, SRTP) → node (UDP, RTP): audio both ways before and after the node’s refresh, hold and resume, and baresip’s; BYE from the node', async () => {
    const bs = await startBaresip({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile });
    phones.push(bs);
    await fx.createSession({ phoneNumber: fx.openNumber });
    const attached = fx.sessions.nextLeg();
    expect((await bs.command('dial', `sip:${fx.openNumber}@127.0.0.1:${edge.tlsPort}`)).ok).toBe(true);
    const rec = await attached;
    await bs.nextEvent('CALL_ESTABLISHED');
    const leg = rec.leg as SipLeg;
    // The node sees a plain call from the edge: UDP, RTP/AVP at rtpengine's address, no key.
    expect(leg.dialog.transport).toBe('udp');
    expect(leg.dialog.remoteSdp).toMatch(/^m=audio \d+ RTP\/AVP /m);
    expect(leg.dialog.remoteSdp).not.toMatch(/a=crypto/);
    // baresip negotiated SRTP (with the edge's rtpengine) and refuses anything else (srtp-mand).
    await eventually(() => /SRTP is Enabled/.test(bs.log()));
    const mark = await checkAudio(bs, rec);

    // A session refresh from the node (same media, new o= version): a re-INVITE through the edge,
    // whose rtpengine must re-offer SRTP to baresip (srtp-mand refuses a plain RTP re-offer with 488,
    // and modify() would throw), with only the AES_CM_128 suites. Media keeps flowing both ways.
    const refreshed = await leg.dialog.modify(reoffer(leg.dialog.localSdp, 'sendrecv'));
    expect(refreshed).toMatch(/^m=audio \d+ RTP\/AVP /m);
    expect(refreshed).not.toMatch(/a=crypto/);
    // What baresip was offered last (its call debug lists the remote crypto attributes).
    const offered = [...(await bs.command('callstat')).data.matchAll(/crypto='\d+ (\S+) inline:/g)].map((m) => m[1]);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.every((suite) => /^AES_CM_128_HMAC_SHA1_(80|32)$/.test(suite ?? ''))).toBe(true);
    await checkAudio(bs, rec, mark);

    // Hold and resume from the node, through the edge.
    const onHold = await leg.dialog.modify(reoffer(leg.dialog.localSdp, 'sendonly'));
    expect(onHold).toMatch(/^m=audio \d+ RTP\/AVP /m);
    expect(onHold).toMatch(/^a=(recvonly|inactive)$/m);
    const resumed = await leg.dialog.modify(reoffer(leg.dialog.localSdp, 'sendrecv'));
    expect(resumed).toMatch(/^a=sendrecv$/m);
    await gatewayHearsBaresip(bs, rec, { frames: rec.frames.length, samples: 0 });
    expect(bs.events.some((e) => e.type === 'CALL_CLOSED')).toBe(false);
    // Every offer baresip got was SRTP with an RFC 4568 suite: it logs each one it keyed.
    expect(bs.log().match(/SRTP is Enabled \(cryptosuite=AES_CM_128_HMAC_SHA1_(80|32)\)/g)?.length).toBe(4);
    expect(bs.log()).not.toMatch(/cryptosuite=(?!AES_CM_128_HMAC_SHA1_)/);

    // Hold and resume from baresip: its SRTP re-offers reach the node as plain RTP/AVP.
    const reinvites = fx.svc.ua.requestCounts.INVITE ?? 0;
    expect((await bs.command('hold')).ok).toBe(true);
    await eventually(() => /a=(sendonly|inactive)/.test(leg.dialog.remoteSdp ?? ''));
    expect(leg.dialog.remoteSdp).toMatch(/^m=audio \d+ RTP\/AVP /m);
    expect(leg.dialog.remoteSdp).not.toMatch(/a=crypto/);
    expect((await bs.command('resume')).ok).toBe(true);
    await eventually(() => /a=sendrecv/.test(leg.dialog.remoteSdp ?? ''));
    expect(fx.svc.ua.requestCounts.INVITE ?? 0).toBe(reinvites + 2);
    await gatewayHearsBaresip(bs, rec, { frames: rec.frames.length, samples: 0 });

    // The node hangs up: its BYE crosses the edge and reaches baresip over the TLS connection it opened.
    leg.close('test_done');
    await bs.nextEvent('CALL_CLOSED');
    await eventually(() => rec.detached !== null);
  });

  it('a connection requiring TLS+SRTP takes baresip’s SRTP call through the edge (the edge says it terminated SRTP); a plain-RTP call over TLS gets 488', async () => {
    const secure = await startBaresip({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile });
    phones.push(secure);
    await fx.createSession({ phoneNumber: secureNumber });
    const attached = fx.sessions.nextLeg();
    expect((await secure.command('dial', `sip:${secureNumber}@127.0.0.1:${edge.tlsPort}`)).ok).toBe(true);
    const rec = await attached;
    await secure.nextEvent('CALL_ESTABLISHED');
    // The node itself sees RTP/AVP from the edge's rtpengine, as for any caller behind the edge.
    expect((rec.leg as SipLeg).dialog.remoteSdp).toMatch(/^m=audio \d+ RTP\/AVP /m);
    await checkAudio(secure, rec);
    (rec.leg as SipLeg).close('test_done');
    await secure.nextEvent('CALL_CLOSED');

    const plain = await startBaresip({ source: micWav, transport: 'tls', caFile: pki.caFile });
    phones.push(plain);
    const before = fx.svc.ua.requestCounts.INVITE ?? 0;
    expect((await plain.command('dial', `sip:${secureNumber}@127.0.0.1:${edge.tlsPort}`)).ok).toBe(true);
    const closed = await plain.nextEvent('CALL_CLOSED');
    expect(closed.param).toMatch(/488/);
    expect(fx.svc.ua.requestCounts.INVITE ?? 0).toBe(before + 1);
    expect(plain.events.some((e) => e.type === 'CALL_ESTABLISHED')).toBe(false);
  });

  it('baresip with a client certificate calls through the edge’s mutual-TLS trunk port: the node takes it (--require-client-cert), audio both ways', async () => {
    const bs = await startBaresip({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile, certificate: clientPem });
    phones.push(bs);
    await fx.createSession({ phoneNumber: mtlsNumber });
    const attached = fx.sessions.nextLeg();
    const trunkPort = edge.trunkPorts[0];
    expect((await bs.command('dial', `sip:${mtlsNumber}@127.0.0.1:${trunkPort}`)).ok).toBe(true);
    const rec = await attached;
    await bs.nextEvent('CALL_ESTABLISHED');
    await checkAudio(bs, rec);
    expect(bs.log()).toMatch(/SRTP is Enabled/);
    (rec.leg as SipLeg).close('test_done');
    await bs.nextEvent('CALL_CLOSED');
  });

  it('baresip without a client certificate cannot call on the trunk port', async () => {
    const bs = await startBaresip({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile });
    phones.push(bs);
    const before = fx.svc.ua.requestCounts.INVITE ?? 0;
    expect((await bs.command('dial', `sip:${mtlsNumber}@127.0.0.1:${edge.trunkPorts[0]}`)).ok).toBe(true);
    // The edge's alert ends the TLS connection; baresip gives the INVITE up (its Timer B, 32 s, at the latest).
    const closed = await bs.nextEvent('CALL_CLOSED', 60_000);
    expect(closed.param).toMatch(/timed out|closed|reset|refused/i);
    expect(bs.events.some((e) => e.type === 'CALL_ESTABLISHED')).toBe(false);
    expect(fx.svc.ua.requestCounts.INVITE ?? 0).toBe(before);
  }, 90_000);

  it('node → edge → baresip (TLS, SRTP offered by the edge’s rtpengine): audio both ways, a refresh from the node, the node hangs up', async () => {
    const bs = await startBaresip({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile, certificate: serverPem });
    phones.push(bs);
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:bs@127.0.0.1:${bs.tlsPort};transport=tls` } } });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, {});
    const rec = await attached;
    const incoming = await bs.nextEvent('CALL_ESTABLISHED');
    expect(incoming.direction).toBe('incoming');
    const leg = rec.leg as SipLeg;
    // The node offered and got plain RTP; baresip (srtp-mand) was offered SRTP by the edge.
    expect(leg.dialog.remoteSdp).toMatch(/^m=audio \d+ RTP\/AVP /m);
    expect(leg.dialog.remoteSdp).not.toMatch(/a=crypto/);
    await eventually(() => /SRTP is Enabled \(cryptosuite=AES_CM_128_HMAC_SHA1_(80|32)\)/.test(bs.log()));
    // The dialog runs through the edge: its Record-Route is the node's route set.
    expect(leg.dialog.routeSet.length).toBeGreaterThan(0);
    const mark = await checkAudio(bs, rec);
    const refreshed = await leg.dialog.modify(reoffer(leg.dialog.localSdp, 'sendrecv'));
    expect(refreshed).toMatch(/^m=audio \d+ RTP\/AVP /m);
    await checkAudio(bs, rec, mark);
    await fx.svc.hangup(sessionId, fx.orgId, {});
    const closed = await bs.nextEvent('CALL_CLOSED');
    expect(closed.id).toBe(incoming.id);
  });

  /** The node dials baresip at 127.0.0.1 over TLS through the edge, baresip presenting `certificate`; the dial's error. */
  async function dialCarrierPresenting(certificate: string): Promise<{ bs: Baresip; err: { code?: string; message?: string } | null }> {
    const bs = await startBaresip({ source: micWav, transport: 'tls', srtp: true, caFile: pki.caFile, certificate });
    phones.push(bs);
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:bs@127.0.0.1:${bs.tlsPort};transport=tls` } } });
    const err = await fx.svc.dial(sessionId, fx.orgId, {}).then(
      () => null,
      (e: unknown) => e as { code?: string; message?: string },
    );
    return { bs, err };
  }

  it('node → edge → a carrier whose TLS certificate the edge does not trust: the dial fails, the carrier never gets the INVITE', async () => {
    const { bs, err } = await dialCarrierPresenting(roguePem);
    expect(err?.code).toBe('dial_failed');
    expect(bs.events.some((e) => e.type === 'CALL_INCOMING')).toBe(false);
    expect(edge.log()).toMatch(/certificate verify failed|verify error|certificate/i);
  }, 90_000);

  it('node → edge → a carrier whose certificate chains to the trusted CA but names another host: the dial fails, no call is set up', async () => {
    // clientPem is from the test CA (the chain check passes) and names carrier.test, not 127.0.0.1.
    const { bs, err } = await dialCarrierPresenting(clientPem);
    expect(err?.code).toBe('dial_failed');
    expect(edge.log()).toMatch(/carrier certificate does not name 127\.0\.0\.1 \(DNS carrier\.test/);
    // Every dial of this file ran the check's script without a script error (an unset $du, say).
    expect(edge.log()).not.toMatch(/lval_assign|non existing right pvar/);
    // The INVITE reached the impostor (the name is known only once its connection answers). Its call
    // ends either way: CANCELled after its 180, or, when its 200 crossed the CANCEL, hung up by the node.
    await bs.nextEvent('CALL_CLOSED', 30_000);
    expect(fx.svc.activeLegs).toBe(0);
  }, 90_000);
});
