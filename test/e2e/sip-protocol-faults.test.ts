// Protocol faults against the real SIP front: no Timer G over TCP (RFC 3261 §17.2.1),
// Record-Route copied into 180 (§12.1.1), ring timeout honoured when the callee never answers at all.
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelephonyFixture, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import { TcpPeer, parseRawResponse, rawMessage, type RawResponse } from '../helpers/sip-raw.js';
import { TelephonyError } from '../../src/telephony/errors.js';

let fx: TelephonyFixture;
beforeAll(async () => {
  fx = await startTelephonyFixture();
}, 60_000);
afterAll(async () => fx?.stop());

const sdp = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40002 RTP/AVP 0\r\n';
const invite = (o: { transport: 'UDP' | 'TCP'; port: number; callId: string; number: string; extra?: string[] }) =>
  rawMessage(
    [
      `INVITE sip:${o.number}@127.0.0.1 SIP/2.0`,
      `Via: SIP/2.0/${o.transport} 127.0.0.1:${o.port};branch=z9hG4bK${o.callId}`,
      'From: <sip:caller@127.0.0.1>;tag=pf1',
      `To: <sip:${o.number}@127.0.0.1>`,
      `Call-ID: ${o.callId}`,
      'CSeq: 1 INVITE',
      'Max-Forwards: 70',
      `Contact: <sip:caller@127.0.0.1:${o.port}${o.transport === 'TCP' ? ';transport=tcp' : ''}>`,
      ...(o.extra ?? []),
      'Content-Type: application/sdp',
      `Content-Length: ${sdp.length}`,
    ],
    {},
    sdp,
  );

/** A UDP peer that keeps every response it receives. */
async function udpPeer(): Promise<{ port: number; responses: RawResponse[]; send(text: string): void; close(): void }> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const responses: RawResponse[] = [];
  s.on('message', (b) => {
    const t = b.toString('latin1');
    if (t.startsWith('SIP/2.0')) responses.push(parseRawResponse(t));
  });
  return { port: s.address().port, responses, send: (text) => s.send(Buffer.from(text, 'latin1'), fx.sipPort, '127.0.0.1'), close: () => s.close() };
}

const unknownNumber = '+19990000000';
const finals = (rs: RawResponse[]) => rs.filter((r) => r.status >= 300);
// Timer G fires at 0.5 s, 1.5 s, 3.5 s: by 4 s an unreliable transport has seen three retransmissions.
const TIMER_G_WINDOW_MS = 4000;

describe('SIP protocol faults', () => {
  it('retransmits a non-2xx INVITE final over UDP until ACK, but never over TCP (Timer G)', async () => {
    const u = await udpPeer();
    u.send(invite({ transport: 'UDP', port: u.port, callId: `tg-udp-${Date.now()}`, number: unknownNumber }));
    await eventually(() => finals(u.responses).length >= 2, 10_000);
    u.close();

    const peer = await TcpPeer.connect(fx.sipPort);
    peer.write(invite({ transport: 'TCP', port: peer.localPort, callId: `tg-tcp-${Date.now()}`, number: unknownNumber }));
    await peer.finalResponse();
    const started = Date.now();
    // Absence of an event: wait out the window in which Timer G would have fired three times.
    await peer.until(() => finals(peer.responses).length > 1 || Date.now() - started > TIMER_G_WINDOW_MS, TIMER_G_WINDOW_MS + 5000);
    expect(finals(peer.responses)).toHaveLength(1);
    peer.close();
  }, 30_000);

  it('copies Record-Route into 180 Ringing (early dialog, RFC 3261 §12.1.1)', async () => {
    await fx.createSession({ phoneNumber: fx.openNumber });
    const u = await udpPeer();
    const callId = `rr-${Date.now()}`;
    u.send(invite({ transport: 'UDP', port: u.port, callId, number: fx.openNumber, extra: ['Record-Route: <sip:edge.example.test;lr>'] }));
    const ringing = await eventually(() => u.responses.find((r) => r.status === 180), 15_000);
    expect(ringing.header('record-route')).toContain('sip:edge.example.test;lr');
    const ok = await eventually(() => u.responses.find((r) => r.status === 200), 15_000);
    expect(ok.header('record-route')).toContain('sip:edge.example.test;lr');
    // Confirm and end the call so the gateway is left clean.
    const to = ok.header('to')!;
    const inDialog = (method: string, seq: number) =>
      rawMessage(
        [
          `${method} sip:voxbridge@127.0.0.1:${fx.sipPort} SIP/2.0`,
          `Via: SIP/2.0/UDP 127.0.0.1:${u.port};branch=z9hG4bK${method}${callId}`,
          'From: <sip:caller@127.0.0.1>;tag=pf1',
          `To: ${to}`,
          `Call-ID: ${callId}`,
          `CSeq: ${seq} ${method}`,
          'Max-Forwards: 70',
          'Content-Length: 0',
        ],
        {},
      );
    u.send(inDialog('ACK', 1));
    u.send(inDialog('BYE', 2));
    await eventually(() => u.responses.some((r) => r.status === 200 && r.header('cseq')?.includes('BYE')), 15_000);
    u.close();
  }, 40_000);

  it('gives up a dial at ring_timeout_seconds when the callee sends no provisional response', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((r) => silent.bind(0, '127.0.0.1', () => r()));
    let invites = 0;
    silent.on('message', () => invites++);
    const sessionId = await fx.createSession({ routing: { type: 'sip', sip: { to_uri: `sip:silent@127.0.0.1:${silent.address().port}` } } });
    const started = Date.now();
    const err = await fx.svc.dial(sessionId, fx.orgId, { ringTimeoutSeconds: 2 }).then(
      () => null,
      (e: unknown) => e,
    );
    const elapsed = Date.now() - started;
    silent.close();
    expect(err).toBeInstanceOf(TelephonyError);
    expect((err as TelephonyError).message).toContain('408');
    expect(invites).toBeGreaterThan(0);
    // Before the fix this took Timer B (32 s); the bound is generous for a busy machine.
    expect(elapsed).toBeLessThan(12_000);
  }, 60_000);
});
