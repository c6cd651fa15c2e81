// Connection reuse (RFC 5923 style): a caller that reached the gateway over TCP or TLS gets the
// gateway's in-dialog requests (re-INVITE and its ACK, BYE) over that same connection, not over a new
// one to its Contact. The Contact here names a port where a listener counts connection attempts: it
// must see none. The same for a dialog the gateway dialled out over TCP or TLS: a SIPp callee whose Contact
// is unreachable still gets the ACK, a re-INVITE and the BYE, over the connection the INVITE went out on.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { startTelephonyFixture, startSipp, freePort, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import { makeTestPki, type TestPki } from '../helpers/tls-certs.js';
import { tlsServerTunnel } from '../helpers/tls-tunnel.js';
import type { SipLeg } from '../../src/telephony/call-leg.js';

interface Msg {
  start: string;
  text: string;
  header(name: string): string | undefined;
}

/** A SIP peer on one stream connection: collects every message (requests and responses) it receives. */
class StreamPeer {
  readonly messages: Msg[] = [];
  private buf = '';
  private waiters: (() => void)[] = [];

  constructor(readonly socket: net.Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      for (;;) {
        const end = this.buf.indexOf('\r\n\r\n');
        if (end < 0) break;
        const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(this.buf.slice(0, end))?.[1] ?? 0);
        if (this.buf.length < end + 4 + len) break;
        const text = this.buf.slice(0, end + 4 + len);
        this.buf = this.buf.slice(end + 4 + len);
        const lines = text.slice(0, end).split('\r\n');
        this.messages.push({
          start: lines[0] ?? '',
          text,
          header(name) {
            const l = lines.find((x) => x.toLowerCase().startsWith(`${name.toLowerCase()}:`));
            return l?.slice(l.indexOf(':') + 1).trim();
          },
        });
      }
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('error', () => {});
  }

  async next(match: (m: Msg) => boolean, timeoutMs = 15_000): Promise<Msg> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = this.messages.find(match);
      if (m) return m;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching message in time; got: ${this.messages.map((x) => x.start).join(' | ')}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  write(s: string): void {
    this.socket.write(s, 'latin1');
  }
}

/** 200 OK to a request received from the gateway (headers copied per RFC 3261 §8.2.6.2). */
function ok(rq: Msg, body = ''): string {
  const h = (n: string) => `${n}: ${rq.header(n) ?? ''}`;
  return [
    'SIP/2.0 200 OK',
    h('Via'),
    h('From'),
    h('To'),
    h('Call-ID'),
    h('CSeq'),
    ...(body ? ['Content-Type: application/sdp'] : []),
    `Content-Length: ${Buffer.byteLength(body, 'latin1')}`,
    '',
    body,
  ].join('\r\n');
}

const sdp = (rtpPort: number) =>
  ['v=0', 'o=- 1 1 IN IP4 127.0.0.1', 's=-', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${rtpPort} RTP/AVP 0`, 'a=rtpmap:0 PCMU/8000', 'a=sendrecv', ''].join(
    '\r\n',
  );

let pki: TestPki;
let fx: TelephonyFixture;
const closers: (() => void)[] = [];

beforeAll(async () => {
  pki = makeTestPki();
  fx = await startTelephonyFixture({ sip: { tls: { port: 0, certFile: pki.serverCert, keyFile: pki.serverKey, caFile: pki.caFile, verifyServer: true } } });
});
afterAll(async () => {
  for (const c of closers) c();
  await fx?.stop();
});

async function connect(protocol: 'TCP' | 'TLS'): Promise<net.Socket> {
  if (protocol === 'TCP') {
    return new Promise((resolve, reject) => {
      const s = net.connect(fx.sipPort, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
  }
  return new Promise((resolve, reject) => {
    const s = tls.connect({ port: fx.svc.ua.tlsPort!, host: '127.0.0.1', ca: readFileSync(pki.caFile) }, () => resolve(s));
    s.once('error', reject);
  });
}

/** A TCP listener on a free port; the connections it accepted and the listener close after the file. */
async function listenOnFreePort(onConnection: (s: net.Socket) => void = () => {}): Promise<{ port: number; server: net.Server }> {
  const port = await freePort();
  const accepted: net.Socket[] = [];
  const server = net.createServer((s) => {
    accepted.push(s);
    onConnection(s);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  closers.push(() => {
    for (const s of accepted) s.destroy();
    server.close();
  });
  return { port, server };
}

/** A listener on a free port that only counts connection attempts (and never answers SIP). */
async function attemptCounter(): Promise<{ port: number; attempts: number }> {
  const counter = { port: 0, attempts: 0 };
  counter.port = (
    await listenOnFreePort((s) => {
      counter.attempts++;
      s.destroy();
    })
  ).port;
  return counter;
}

describe.each(['TCP', 'TLS'] as const)('requests to a caller that connected over %s', (protocol) => {
  it('re-INVITE, its ACK and BYE come back over the caller’s connection, none over a new one to its Contact', async () => {
    // The caller's Contact port: a listener that only counts connection attempts.
    const contactListener = await attemptCounter();
    const contactPort = contactListener.port;
    const rtp = dgram.createSocket('udp4');
    await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', () => r()));
    closers.push(() => rtp.close());

    const socket = await connect(protocol);
    closers.push(() => socket.destroy());
    const peer = new StreamPeer(socket);
    await fx.createSession({ phoneNumber: fx.openNumber });
    const attached = fx.sessions.nextLeg();
    const callId = `reuse-${protocol}-${Date.now()}`;
    const contact = protocol === 'TLS' ? `<sips:caller@127.0.0.1:${contactPort}>` : `<sip:caller@127.0.0.1:${contactPort};transport=tcp>`;
    const body = sdp(rtp.address().port);
    const head = (method: string, seq: number) => [
      `${method} sip:${fx.openNumber}@127.0.0.1 SIP/2.0`,
      `Via: SIP/2.0/${protocol} 127.0.0.1:${contactPort};branch=z9hG4bK${method.toLowerCase()}${seq}${Date.now()}`,
      'Max-Forwards: 70',
      'From: <sip:caller@127.0.0.1>;tag=caller1',
      `To: <sip:${fx.openNumber}@127.0.0.1>`,
      `Call-ID: ${callId}`,
      `CSeq: ${seq} ${method}`,
      `Contact: ${contact}`,
    ];
    peer.write([...head('INVITE', 1), 'Content-Type: application/sdp', `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n'));
    const answer = await peer.next((m) => m.start.startsWith('SIP/2.0 200'));
    const to = answer.header('To') ?? '';
    expect(to).toMatch(/;tag=/);
    // The caller's Contact was sips: over TLS, so the dialog is secure and so is our Contact (§8.1.1.8).
    if (protocol === 'TLS') expect(answer.header('Contact')).toBe(`<sips:voxbridge@127.0.0.1:${fx.svc.ua.tlsPort}>`);
    else expect(answer.header('Contact')).toBe(`<sip:voxbridge@127.0.0.1:${fx.sipPort};transport=tcp>`);
    peer.write(
      [
        `ACK sip:voxbridge@127.0.0.1 SIP/2.0`,
        `Via: SIP/2.0/${protocol} 127.0.0.1:${contactPort};branch=z9hG4bKack${Date.now()}`,
        'Max-Forwards: 70',
        'From: <sip:caller@127.0.0.1>;tag=caller1',
        `To: ${to}`,
        `Call-ID: ${callId}`,
        'CSeq: 1 ACK',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
    const leg = (await attached).leg as SipLeg;
    expect(leg.dialog.transport).toBe(protocol.toLowerCase());

    // re-INVITE from the gateway (e.g. a media change): over this connection, and its ACK too.
    const modified = leg.dialog.modify(leg.dialog.localSdp);
    const reinvite = await peer.next((m) => m.start.startsWith('INVITE '));
    expect(reinvite.header('Via')).toMatch(new RegExp(`^SIP/2\\.0/${protocol} `));
    peer.write(ok(reinvite, body));
    expect(await modified).toContain('m=audio');
    await peer.next((m) => m.start.startsWith('ACK '));

    leg.close('test_done');
    const bye = await peer.next((m) => m.start.startsWith('BYE '));
    expect(bye.header('Call-ID')).toBe(callId);
    peer.write(ok(bye));
    expect(contactListener.attempts).toBe(0);
  });
});

describe('when the caller’s connection has closed', () => {
  let idleFx: TelephonyFixture;
  beforeAll(async () => {
    // The gateway closes idle connections after 5 s itself, so it knows the flow is gone.
    idleFx = await startTelephonyFixture({
      sip: { stream: { tcpIdleTimeoutMs: 5000, tcpMessageTimeoutMs: 10_000, maxConnectionsPerSource: 32, maxConnections: 4096 } },
    });
  });
  afterAll(async () => {
    await idleFx?.stop();
  });

  it('the gateway routes its BYE by the Contact again (a new connection)', async () => {
    const fx = idleFx;
    const { port: contactPort, server: contactListener } = await listenOnFreePort();
    const rtp = dgram.createSocket('udp4');
    await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', () => r()));
    closers.push(() => rtp.close());
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(fx.sipPort, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    const closed = new Promise((r) => socket.once('close', r));
    const peer = new StreamPeer(socket);
    await fx.createSession({ phoneNumber: fx.openNumber });
    const attached = fx.sessions.nextLeg();
    const callId = `reuse-closed-${Date.now()}`;
    const body = sdp(rtp.address().port);
    const common = ['Max-Forwards: 70', 'From: <sip:caller@127.0.0.1>;tag=caller2', `Call-ID: ${callId}`];
    peer.write(
      [
        `INVITE sip:${fx.openNumber}@127.0.0.1 SIP/2.0`,
        `Via: SIP/2.0/TCP 127.0.0.1:${contactPort};branch=z9hG4bKinv${Date.now()}`,
        ...common,
        `To: <sip:${fx.openNumber}@127.0.0.1>`,
        'CSeq: 1 INVITE',
        `Contact: <sip:caller@127.0.0.1:${contactPort};transport=tcp>`,
        'Content-Type: application/sdp',
        `Content-Length: ${Buffer.byteLength(body)}`,
        '',
        body,
      ].join('\r\n'),
    );
    const answer = await peer.next((m) => m.start.startsWith('SIP/2.0 200'));
    peer.write(
      [
        'ACK sip:voxbridge@127.0.0.1 SIP/2.0',
        `Via: SIP/2.0/TCP 127.0.0.1:${contactPort};branch=z9hG4bKack${Date.now()}`,
        ...common,
        `To: ${answer.header('To') ?? ''}`,
        'CSeq: 1 ACK',
        'Content-Length: 0',
        '',
        '',
      ].join('\r\n'),
    );
    const leg = (await attached).leg as SipLeg;
    // Idle: the gateway closes the connection.
    await closed;
    const connected = new Promise<net.Socket>((r) => contactListener.once('connection', r));
    leg.close('test_done');
    const fresh = new StreamPeer(await connected);
    const bye = await fresh.next((m) => m.start.startsWith('BYE '));
    expect(bye.header('Call-ID')).toBe(callId);
    fresh.write(ok(bye));
  });

  it('a dialled dialog routes its BYE by the Contact once the INVITE’s connection has closed', async () => {
    const fx = idleFx;
    const { port: contactPort, server: contactListener } = await listenOnFreePort();
    // The callee: answers the INVITE on the connection the gateway opened, naming another port as Contact.
    let calleeConn: StreamPeer | null = null;
    const { port: calleePort } = await listenOnFreePort((sock) => {
      calleeConn ??= new StreamPeer(sock);
    });
    const rtp = dgram.createSocket('udp4');
    await new Promise<void>((r) => rtp.bind(0, '127.0.0.1', () => r()));
    closers.push(() => rtp.close());
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${calleePort};transport=tcp` } } });
    const attached = fx.sessions.nextLeg();
    const dialled = fx.svc.dial(sessionId, fx.orgId, {});
    const peer = await eventually(() => calleeConn);
    const closed = new Promise((r) => peer.socket.once('close', r));
    const inv = await peer.next((m) => m.start.startsWith('INVITE '));
    const answer = ok(inv, sdp(rtp.address().port))
      .replace(/^To: (.*)$/m, (_l, to: string) => `To: ${to};tag=callee3`)
      .replace('Content-Type:', `Contact: <sip:callee@127.0.0.1:${contactPort};transport=tcp>\r\nContent-Type:`);
    peer.write(answer);
    await dialled;
    await peer.next((m) => m.start.startsWith('ACK '));
    const leg = (await attached).leg as SipLeg;
    expect(leg.dialog.flow).toMatchObject({ protocol: 'TCP', port: calleePort });
    // Idle: the gateway closes the connection; its BYE then goes to the Contact on a new one.
    await closed;
    const connected = new Promise<net.Socket>((r) => contactListener.once('connection', r));
    await fx.svc.hangup(sessionId, fx.orgId, {});
    const fresh = new StreamPeer(await connected);
    const bye = await fresh.next((m) => m.start.startsWith('BYE '));
    expect(bye.header('Call-ID')).toBe(inv.header('Call-ID'));
    fresh.write(ok(bye));
  });
});

describe.each(['TCP', 'TLS'] as const)('requests to a callee the gateway dialled over %s', (protocol) => {
  it('ACK, re-INVITE with its ACK, and BYE go over the INVITE’s connection when the callee’s Contact is unreachable', async () => {
    // The callee's Contact port: a listener that only counts connection attempts (it never answers SIP).
    const contactListener = await attemptCounter();
    const contactPort = contactListener.port;
    // Over TLS the SIPp callee sits behind a TLS hop (Debian's SIPp has no TLS): the gateway's
    // connection is the one to the tunnel.
    const sippPort = await freePort();
    const tunnel = protocol === 'TLS' ? await tlsServerTunnel({ target: sippPort, cert: pki.serverCert, key: pki.serverKey }) : null;
    if (tunnel) closers.push(() => void tunnel.close());
    const callee = await startSipp({
      scenario: 'uas-answer-unreachable-contact.xml',
      transport: 't1',
      port: sippPort,
      keys: { contact_port: String(contactPort), contact_transport: protocol.toLowerCase() },
    });
    const dialled = tunnel?.port ?? sippPort;
    const sessionId = await fx.createSession({
      routing: { type: 'sip', sip: { to_uri: `sip:callee@127.0.0.1:${dialled};transport=${protocol.toLowerCase()}` } },
    });
    const attached = fx.sessions.nextLeg();
    await fx.svc.dial(sessionId, fx.orgId, {});
    const leg = (await attached).leg as SipLeg;
    expect(leg.dialog.transport).toBe(protocol.toLowerCase());
    expect(leg.dialog.remoteTarget).toBe(`sip:callee@127.0.0.1:${contactPort};transport=${protocol.toLowerCase()}`);
    // The dialog keeps the INVITE's connection (to the address dialled), not the Contact.
    expect(leg.dialog.flow).toMatchObject({ protocol, address: '127.0.0.1', port: dialled });
    expect(await leg.dialog.modify(leg.dialog.localSdp)).toContain('m=audio');
    await fx.svc.hangup(sessionId, fx.orgId, {});
    const r = await callee.done;
    expect(r.code, `${r.errors}\n${r.stderr}`).toBe(0);
    expect(contactListener.attempts).toBe(0);
  });
});
