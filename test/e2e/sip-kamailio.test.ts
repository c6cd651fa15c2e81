// The Kamailio edge (sip/kamailio/) in front of a voxbridge node that trusts only it
// (SIP_TRUSTED_EDGE): SIPp callers on other loopback addresses (127.0.0.2…) reach the node through
// the edge, media is anchored by the edge's rtpengine, the node admits callers by the address the
// edge names, and the edge stops floods (pike), malformed messages (sanity) and terminates TLS.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import tls from 'node:tls';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTelephonyFixture, startSipp, eventually, attachedBeforeSippEnds, type TelephonyFixture, type SippResult } from '../helpers/sip-harness.js';
import { startRtpengine, type RtpengineHandle } from '../helpers/rtpengine.js';
import { startKamailio, type KamailioHandle } from '../helpers/kamailio.js';
import { parseRawResponse, type RawResponse } from '../helpers/sip-raw.js';
import * as repo from '../../src/store/telephony-repo.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/packet.js';
import { parseSdp } from '../../src/telephony/sdp/sdp.js';
import { alawEncode, alawDecode } from '../../src/media/g711.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

const PIKE_DENSITY = 20;
let rtpengine: RtpengineHandle;
let fx: TelephonyFixture;
let edge: KamailioHandle;
/** A number whose connection admits only 127.0.0.2: reachable only when the node sees the caller's real address. */
let onlyFrom2: string;

beforeAll(async () => {
  const certDir = mkdtempSync(path.join(tmpdir(), 'edge-tls-'));
  const cert = path.join(certDir, 'cert.pem');
  const key = path.join(certDir, 'key.pem');
  const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=edge.test'], {
    encoding: 'utf8',
  });
  if (made.status !== 0) throw new Error(`openssl: ${made.stderr}`);
  rtpengine = await startRtpengine();
  // The edge listens on 127.0.0.1: the node takes SIP from that address only.
  fx = await startTelephonyFixture({ sip: { transports: ['udp'], trustedEdge: { cidrs: ['127.0.0.1/32'], sourceHeader: 'X-VB-Source' } } });
  const conn = await repo.createConnection(fx.db, {
    orgId: fx.orgId,
    provider: 'carrier_a',
    host: '127.0.0.2',
    port: 5060,
    transport: 'udp',
    inboundCidrs: ['127.0.0.2/32'],
  });
  onlyFrom2 = `+1888${String(Date.now()).slice(-8)}`;
  await repo.createPhoneNumber(fx.db, { orgId: fx.orgId, number: onlyFrom2, connectionId: conn.id });
  edge = await startKamailio({ nodes: [`127.0.0.1:${fx.sipPort}`], rtpengine: rtpengine.ng, tls: { cert, key }, pikeDensity: PIKE_DENSITY, pikePeriod: 2 });
}, 90_000);
afterAll(async () => {
  await edge?.stop();
  await fx?.stop();
  await rtpengine?.stop();
});

const ok = (r: SippResult) => expect(r.code, `${r.errors}\n${r.stderr}\n${edge.log().slice(-3000)}`).toBe(0);
const rms = (f: Int16Array) => Math.sqrt(f.reduce((a, s) => a + s * s, 0) / f.length);
function tone(amplitude: number): Int16Array {
  const f = new Int16Array(160);
  for (let i = 0; i < 160; i++) f[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return f;
}
const requests = (method: string) => fx.svc.ua.requestCounts[method] ?? 0;

async function socketOn(address: string): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, address, () => r()));
  return s;
}

/** An OPTIONS for a number (so the edge passes it on to a node) from `s`. */
function options(s: dgram.Socket, to: number, tag: string, transport = 'UDP', extra: string[] = []): string {
  const { address, port } = s.address();
  return [
    `OPTIONS sip:${fx.openNumber}@127.0.0.1:${to} SIP/2.0`,
    `Via: SIP/2.0/${transport} ${address}:${port};branch=z9hG4bK-${tag};rport`,
    `From: <sip:probe@${address}>;tag=${tag}`,
    `To: <sip:${fx.openNumber}@127.0.0.1>`,
    `Call-ID: ${tag}@test`,
    'CSeq: 1 OPTIONS',
    'Max-Forwards: 70',
    ...extra,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/** Collects the final responses `s` receives. */
function finals(s: dgram.Socket): RawResponse[] {
  const got: RawResponse[] = [];
  s.on('message', (m) => {
    const rs = parseRawResponse(m.toString('latin1'));
    if (rs.status >= 200) got.push(rs);
  });
  return got;
}

describe('the Kamailio edge in front of a node', () => {
  it('carries a call to the node, media anchored by the edge’s rtpengine both ways, and the BYE back', async () => {
    await fx.createSession({ phoneNumber: onlyFrom2 });
    const peer = await socketOn('127.0.0.2');
    const attached = fx.sessions.nextLeg();
    const sipp = await startSipp({
      scenario: 'uac-edge-call-remote-bye.xml',
      target: `127.0.0.1:${edge.port}`,
      localIp: '127.0.0.2',
      service: onlyFrom2,
      keys: { rtp_port: String(peer.address().port), codecs: '8 101' },
    });
    const rec = await attachedBeforeSippEnds(attached, sipp);
    const leg = rec.leg as SipLeg;
    // The node was offered rtpengine's address, not the caller's: the edge anchors the media.
    const offered = parseSdp(leg.dialog.remoteSdp!).audio!;
    expect(offered.port).toBeGreaterThanOrEqual(rtpengine.portMin);
    expect(offered.port).toBeLessThanOrEqual(rtpengine.portMax);

    // Node → rtpengine → caller; the caller answers to where rtpengine sends from.
    let back: { port: number; address: string } | null = null;
    const heard: number[] = [];
    peer.on('message', (m, rinfo) => {
      const p = parseRtp(m);
      if (p?.payloadType !== 8) return;
      heard.push(rms(alawDecode(p.payload)));
      back = { port: rinfo.port, address: rinfo.address };
    });
    const playing = setInterval(() => leg.playFrame(tone(6000)), 20);
    let seq = 0;
    const payload = alawEncode(tone(8000));
    const sender = setInterval(() => {
      if (!back) return;
      peer.send(serializeRtp({ marker: seq === 0, payloadType: 8, sequence: seq, timestamp: seq * 160, ssrc: 9, payload }), back.port, back.address);
      seq++;
    }, 20);
    try {
      await eventually(() => heard.some((v) => v > 3000));
      await eventually(() => rec.frames.some((f) => rms(f) > 3000));
    } finally {
      clearInterval(playing);
      clearInterval(sender);
    }
    expect(back!.address).toBe('127.0.0.1'); // rtpengine, not the node's own RTP port
    expect(back!.port).toBeGreaterThanOrEqual(rtpengine.portMin);
    leg.close('test_done');
    ok(await sipp.done);
    await eventually(() => rec.detached !== null);
    peer.close();
  });

  it("admits callers by the address the edge names, not the edge's own", async () => {
    // 127.0.0.3 is not in the number's connection: the node refuses it although the packet came from the edge.
    const refused = await startSipp({ scenario: 'uac-expect-403.xml', target: `127.0.0.1:${edge.port}`, localIp: '127.0.0.3', service: onlyFrom2 });
    ok(await refused.done);
    expect(fx.svc.callCounts['inbound:rejected_403']).toBeGreaterThanOrEqual(1);
  });

  it('refuses and counts SIP that reaches the node from anywhere but the edge', async () => {
    const direct = await socketOn('127.0.0.2');
    const got = finals(direct);
    const before = fx.svc.refusals.counts.not_from_edge ?? 0;
    const taken = requests('OPTIONS');
    direct.send(options(direct, fx.sipPort, 'direct-1'), fx.sipPort, '127.0.0.1');
    await eventually(() => (fx.svc.refusals.counts.not_from_edge ?? 0) > before);
    // The same OPTIONS through the edge is answered by the node.
    direct.send(options(direct, edge.port, 'via-edge-1'), edge.port, '127.0.0.1');
    await eventually(() => got.length > 0);
    expect(got.map((r) => [r.status, r.header('Call-ID')])).toEqual([[200, 'via-edge-1@test']]);
    expect(requests('OPTIONS')).toBe(taken + 1);
    direct.close();
  });

  it('answers a malformed message at the edge (sanity) without passing it on', async () => {
    const s = await socketOn('127.0.0.4');
    const got = finals(s);
    const taken = requests('OPTIONS');
    s.send(options(s, edge.port, 'bad-cseq').replace('CSeq: 1 OPTIONS', 'CSeq: 1x OPTIONS'), edge.port, '127.0.0.1');
    s.send(options(s, edge.port, 'bad-version').replace(/^OPTIONS (\S+) SIP\/2\.0/, 'OPTIONS $1 SIP/7.0'), edge.port, '127.0.0.1');
    // A well-formed one after them: once it is answered, the malformed ones have been dealt with.
    s.send(options(s, edge.port, 'good'), edge.port, '127.0.0.1');
    await eventually(() => got.some((r) => r.header('Call-ID') === 'good@test'));
    expect(requests('OPTIONS')).toBe(taken + 1);
    const byCallId = Object.fromEntries(got.map((r) => [r.header('Call-ID'), r]));
    // sanity answers the bad CSeq itself, naming the fault; the SIP/7.0 request line does not even
    // parse at the edge and is dropped. The node saw neither.
    expect(byCallId['bad-cseq@test']?.status).toBe(400);
    expect(byCallId['bad-cseq@test']?.reason).toMatch(/cseq/i);
    expect(byCallId['bad-cseq@test']?.header('Server')).toBe('voxbridge-edge');
    expect(byCallId['bad-version@test']?.status ?? 0).not.toBe(200);
    expect(byCallId['good@test'].status).toBe(200);
    s.close();
  });

  it('cuts a flood from one source at the edge (pike) while other callers get through', async () => {
    const flooder = await socketOn('127.0.0.5');
    const got = finals(flooder);
    const taken = requests('OPTIONS');
    const N = 300;
    for (let i = 0; i < N; i++) flooder.send(options(flooder, edge.port, `flood-${i}`), edge.port, '127.0.0.1');
    // Another caller still reaches the node.
    const other = await socketOn('127.0.0.6');
    const otherGot = finals(other);
    other.send(options(other, edge.port, 'bystander'), edge.port, '127.0.0.1');
    await eventually(() => otherGot.length > 0);
    expect(otherGot[0]?.status).toBe(200);
    await eventually(() => /flood from 127\.0\.0\.5/.test(edge.log()));
    await eventually(() => got.length > 0); // the first requests of the flood did pass
    const passed = requests('OPTIONS') - taken - 1;
    // pike lets through about PIKE_DENSITY per 2 s window before it bans; the node sees few of the 300.
    expect(passed).toBeGreaterThan(0);
    expect(passed).toBeLessThan(PIKE_DENSITY * 4);
    expect(got.length).toBeLessThan(PIKE_DENSITY * 4);
    flooder.close();
    other.close();
  });

  it('terminates TLS: an OPTIONS over TLS reaches the node over UDP and is answered over TLS', async () => {
    const taken = requests('OPTIONS');
    const socket = tls.connect({ host: '127.0.0.1', port: edge.tlsPort!, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    const msg = [
      `OPTIONS sip:${fx.openNumber}@127.0.0.1:${edge.tlsPort};transport=tls SIP/2.0`,
      `Via: SIP/2.0/TLS 127.0.0.1:${socket.localPort};branch=z9hG4bK-tls-1;rport`,
      `From: <sip:probe@127.0.0.1>;tag=tls1`,
      `To: <sip:${fx.openNumber}@127.0.0.1>`,
      'Call-ID: tls-1@test',
      'CSeq: 1 OPTIONS',
      'Max-Forwards: 70',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    socket.write(msg, 'latin1');
    await eventually(() => /\r\n\r\n/.test(text) && /^SIP\/2\.0 [2-6]\d\d/m.test(text));
    const rs = parseRawResponse(text.slice(text.search(/SIP\/2\.0 [2-6]\d\d/)));
    expect(rs.status).toBe(200);
    expect(rs.header('Server')).toBe('voxbridge'); // the node's answer, relayed
    expect(requests('OPTIONS')).toBe(taken + 1);
    socket.destroy();
  });

  it('terminates SRTP offered over TLS in the edge’s rtpengine: the node gets RTP/AVP, the caller RTP/SAVP with a key', async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const acksBefore = requests('ACK');
    const attached = fx.sessions.nextLeg();
    const socket = tls.connect({ host: '127.0.0.1', port: edge.tlsPort!, rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    const local = `127.0.0.1:${socket.localPort}`;
    const sdp = [
      'v=0',
      'o=caller 1 1 IN IP4 127.0.0.1',
      's=-',
      'c=IN IP4 127.0.0.1',
      't=0 0',
      'm=audio 40002 RTP/SAVP 0 101',
      'a=rtpmap:0 PCMU/8000',
      'a=rtpmap:101 telephone-event/8000',
      'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz',
      'a=sendrecv',
      '',
    ].join('\r\n');
    const head = (method: string, cseq: number, extra: string[] = [], uri = `sip:${fx.openNumber}@127.0.0.1:${edge.tlsPort};transport=tls`) => [
      `${method} ${uri} SIP/2.0`,
      `Via: SIP/2.0/TLS ${local};branch=z9hG4bK-srtp-${method}-${cseq};rport`,
      'From: <sip:+15550002222@127.0.0.1>;tag=srtp1',
      `To: <sip:${fx.openNumber}@127.0.0.1>${extra.find((l) => l.startsWith(';tag=')) ?? ''}`,
      'Call-ID: srtp-1@test',
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:caller@${local};transport=tls>`,
      'Max-Forwards: 70',
      ...extra.filter((l) => !l.startsWith(';tag=')),
    ];
    socket.write([...head('INVITE', 1, ['Content-Type: application/sdp', `Content-Length: ${sdp.length}`]), '', sdp].join('\r\n'), 'latin1');
    const leg = (await attached).leg as SipLeg;
    // The node was offered plain RTP by rtpengine.
    expect(leg.dialog.remoteSdp).toMatch(/m=audio \d+ RTP\/AVP /);
    expect(leg.dialog.remoteSdp).not.toMatch(/a=crypto/);
    await eventually(() => /SIP\/2\.0 200 OK[\s\S]*\r\n\r\n[\s\S]*m=audio/.test(text));
    const ok200 = parseRawResponse(text.slice(text.indexOf('SIP/2.0 200 OK')));
    const answer = ok200.text.split('\r\n\r\n')[1] ?? '';
    expect(answer).toMatch(/m=audio \d+ RTP\/SAVP 0/);
    expect(answer).toMatch(/a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:/);
    // ACK along the Record-Route set, then the node hangs up: its BYE reaches us over TLS.
    // RFC 3261 §12.1.2: the route set is the Record-Route list reversed; the remote target is the Contact.
    const recordRoutes = (ok200.text.split('\r\n\r\n')[0] ?? '')
      .split('\r\n')
      .filter((l) => /^record-route:/i.test(l))
      .flatMap((l) => l.replace(/^record-route:\s*/i, '').split(/,\s*(?=<)/));
    const routes = recordRoutes.reverse().map((r) => `Route: ${r}`);
    const target = /<([^>]+)>/.exec(ok200.header('Contact') ?? '')?.[1] ?? '';
    const toTag = /;tag=([^;\s]+)/.exec(ok200.header('To') ?? '')?.[1] ?? '';
    socket.write([...head('ACK', 1, [`;tag=${toTag}`, ...routes, 'Content-Length: 0'], target), '', ''].join('\r\n'), 'latin1');
    await eventually(() => requests('ACK') > acksBefore);
    leg.close('test_done');
    await eventually(() => /^BYE /m.test(text));
    socket.destroy();
  });
});
