// Mutual TLS per trunk at the Kamailio edge (sip/kamailio/render.sh EDGE_TLS_TRUNKS): a trunk's TLS
// port requires a client certificate issued by that trunk's CA, so a carrier without one (or with one
// from another CA) fails the handshake and never reaches a node. A verified certificate is passed on
// to the node (X-VB-Transport, X-VB-Client-Cert, believed only from the edge), whose connection
// requires a client certificate from the same CA with subject carrier.test (--require-client-cert):
// the call is taken. Without a certificate at the edge the node refuses the call (403) even when
// the caller forges the edge's headers.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { startTelephonyFixture, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import { addMtlsTrunkNumber, startKamailio, type KamailioHandle } from '../helpers/kamailio.js';
import { makeTestPki, type TestPki } from '../helpers/tls-certs.js';
import { parseRawResponse, type RawResponse } from '../helpers/sip-raw.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';
import { defined } from '../helpers/defined.js';

let pki: TestPki;
let fx: TelephonyFixture;
let edge: KamailioHandle;
/** A number whose connection requires a client certificate from the test CA with subject carrier.test. */
let mtlsNumber: string;

beforeAll(async () => {
  pki = makeTestPki();
  fx = await startTelephonyFixture({ sip: { transports: ['udp'], trustedEdge: { cidrs: ['127.0.0.1/32'], sourceHeader: 'X-VB-Source' } } });
  mtlsNumber = await addMtlsTrunkNumber(fx, pki.caFile);
  // The main TLS port asks for a certificate (verified when given, not required); the trunk port requires one.
  edge = await startKamailio({
    nodes: [`127.0.0.1:${fx.sipPort}`],
    tls: { cert: pki.serverCert, key: pki.serverKey, clientCa: pki.caFile, trunkCas: [pki.caFile] },
  });
}, 90_000);

afterAll(async () => {
  await edge?.stop();
  await fx?.stop();
});

const invites = () => fx.svc.ua.requestCounts.INVITE ?? 0;

interface Client {
  socket: tls.TLSSocket;
  text: () => string;
  /** Resolves when the connection ends, with the error that ended it (if any). */
  closed: Promise<Error | null>;
}

/** A TLS connection to the edge, with the edge's certificate checked and an optional client certificate. */
async function connect(port: number, client?: { cert: string; key: string }): Promise<Client> {
  const socket = tls.connect({
    host: '127.0.0.1',
    port,
    ca: readFileSync(pki.caFile),
    ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
  });
  let error: Error | null = null;
  socket.on('error', (e) => (error = e));
  const closed = new Promise<Error | null>((r) => socket.once('close', () => r(error)));
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', () => resolve());
    socket.once('error', reject);
    socket.once('close', () => reject(error ?? new Error('closed during the handshake')));
  });
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (text += d));
  return { socket, text: () => text, closed };
}

const sdp = [
  'v=0',
  'o=carrier 1 1 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 40004 RTP/AVP 0',
  'a=rtpmap:0 PCMU/8000',
  'a=sendrecv',
  '',
].join('\r\n');

/** Sends an INVITE for `number` over `c` (to the edge's `port`), with `extra` headers. */
function invite(c: Client, port: number, callId: string, extra: string[] = []): void {
  const local = `127.0.0.1:${c.socket.localPort}`;
  c.socket.write(
    [
      `INVITE sip:${mtlsNumber}@127.0.0.1:${port};transport=tls SIP/2.0`,
      `Via: SIP/2.0/TLS ${local};branch=z9hG4bK-${callId};rport`,
      `From: <sip:+15550003333@carrier.test>;tag=${callId}`,
      `To: <sip:${mtlsNumber}@127.0.0.1>`,
      `Call-ID: ${callId}@test`,
      'CSeq: 1 INVITE',
      `Contact: <sip:carrier@${local};transport=tls>`,
      'Max-Forwards: 70',
      ...extra,
      'Content-Type: application/sdp',
      `Content-Length: ${sdp.length}`,
      '',
      sdp,
    ].join('\r\n'),
    'latin1',
  );
}

/** The first final response in what `c` received. */
async function finalResponse(c: Client): Promise<RawResponse> {
  const at = () => c.text().search(/SIP\/2\.0 [2-6]\d\d /);
  await eventually(() => at() >= 0 && c.text().indexOf('\r\n\r\n', at()) > 0);
  return parseRawResponse(c.text().slice(at()));
}

/** ACKs a 2xx along its Record-Route set (RFC 3261 §12.1.2), as the SRTP test in sip-kamailio.test.ts does. */
function ack(c: Client, ok: RawResponse, callId: string): void {
  const local = `127.0.0.1:${c.socket.localPort}`;
  const recordRoutes = (ok.text.split('\r\n\r\n')[0] ?? '')
    .split('\r\n')
    .filter((l) => /^record-route:/i.test(l))
    .flatMap((l) => l.replace(/^record-route:\s*/i, '').split(/,\s*(?=<)/));
  const target = /<([^>]+)>/.exec(ok.header('Contact') ?? '')?.[1] ?? '';
  c.socket.write(
    [
      `ACK ${target} SIP/2.0`,
      `Via: SIP/2.0/TLS ${local};branch=z9hG4bK-ack-${callId};rport`,
      `From: <sip:+15550003333@carrier.test>;tag=${callId}`,
      `To: ${ok.header('To') ?? ''}`,
      `Call-ID: ${callId}@test`,
      'CSeq: 1 ACK',
      ...recordRoutes.reverse().map((r) => `Route: ${r}`),
      'Max-Forwards: 70',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
    'latin1',
  );
}

describe('mutual TLS per trunk at the Kamailio edge', () => {
  it.each([
    ['the trunk port (certificate required)', () => defined(edge.trunkPorts[0], 'trunk port')],
    ['the main TLS port (certificate asked for)', () => edge.tlsPort!],
  ])('a carrier with a certificate from the trunk’s CA is taken on %s: the node checks it and answers', async (_where, port) => {
    const callId = `mtls-ok-${port()}`;
    await fx.createSession({ phoneNumber: mtlsNumber });
    const attached = fx.sessions.nextLeg();
    const c = await connect(port(), { cert: pki.clientCert, key: pki.clientKey });
    invite(c, port(), callId);
    const ok = await finalResponse(c);
    expect(ok.status, c.text()).toBe(200);
    ack(c, ok, callId);
    const leg = (await attached).leg as SipLeg;
    await eventually(() => (fx.svc.ua.requestCounts.ACK ?? 0) > 0);
    leg.close('test_done');
    await eventually(() => /\r\nBYE /.test(`\r\n${c.text()}`));
    c.socket.destroy();
  });

  it.each([
    ['without a certificate', undefined, /alert certificate required/],
    ['with a certificate from another CA', 'rogue', /alert unknown ca/],
  ] as const)('the trunk port refuses a carrier %s at the handshake; no node sees its INVITE', async (_how, which, alert) => {
    const before = invites();
    const client = which === 'rogue' ? { cert: pki.rogueCert, key: pki.rogueKey } : undefined;
    // TLS 1.3: the client may finish its side of the handshake before the edge checks its
    // certificate, so the refusal arrives as an alert and a close (or fails the connect outright).
    let err: Error | null;
    let received = '';
    try {
      const c = await connect(defined(edge.trunkPorts[0], 'trunk port'), client);
      invite(c, defined(edge.trunkPorts[0], 'trunk port'), `mtls-refused-${which ?? 'none'}`);
      err = await c.closed;
      received = c.text();
    } catch (e) {
      err = e as Error;
    }
    expect(received).toBe('');
    expect(String(err)).toMatch(alert);
    expect(invites()).toBe(before);
  });

  it('the node refuses a caller that came to the edge without a certificate (403), even with forged edge headers', async () => {
    const port = edge.tlsPort!;
    const c = await connect(port);
    const forged = Buffer.from(readFileSync(pki.clientCert, 'utf8')).toString('base64');
    invite(c, port, 'mtls-forged', ['X-VB-Transport: tls', `X-VB-Client-Cert: ${forged}`]);
    const rs = await finalResponse(c);
    expect(rs.status).toBe(403);
    expect(rs.reason).toBe('Forbidden (Client Certificate Required)');
    expect(fx.svc.callCounts['inbound:rejected_403']).toBeGreaterThanOrEqual(1);
    c.socket.destroy();
  });

  it('the main TLS port refuses a certificate it cannot verify (another CA)', async () => {
    const before = invites();
    let err: Error | null;
    let received = '';
    try {
      const c = await connect(edge.tlsPort!, { cert: pki.rogueCert, key: pki.rogueKey });
      invite(c, edge.tlsPort!, 'mtls-main-rogue');
      err = await c.closed;
      received = c.text();
    } catch (e) {
      err = e as Error;
    }
    expect(received).toBe('');
    expect(String(err)).toMatch(/alert unknown ca/);
    expect(invites()).toBe(before);
  });
});
