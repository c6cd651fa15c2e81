// SIP capture end to end: a real call (SIPp) is captured in both directions, found by Call-ID,
// number and session, exported to a HEP collector (a UDP socket here) and drawn by
// `voxbridge admin calls trace`.
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelephonyFixture, startSipp, eventually, type TelephonyFixture } from '../helpers/sip-harness.js';
import sip from 'sip';
import { getSipTrace, searchSipCalls, purgeSipMessages, insertSipMessageBatch, emptySipMessageBatch, createPool } from '../../src/store/index.js';
import { SipCapture } from '../../src/telephony/capture/sip-capture.js';
import { decodeHep, HEP_CHUNK } from '../../src/telephony/index.js';
import { runCli } from '../helpers/cli.js';
import { defined } from '../helpers/defined.js';

let fx: TelephonyFixture;
let collector: dgram.Socket;
const hep: Buffer[] = [];
beforeAll(async () => {
  collector = dgram.createSocket('udp4');
  collector.on('message', (m) => hep.push(m));
  await new Promise<void>((r) => collector.bind(0, '127.0.0.1', r));
  fx = await startTelephonyFixture({ capture: { enabled: true, hepAddress: `127.0.0.1:${collector.address().port}`, queueSize: 50, batchSize: 10 } });
}, 60_000);
afterAll(async () => {
  await fx?.stop();
  collector?.close();
});

describe('SIP capture', () => {
  it('keeps every message of a call, both directions, searchable, exported over HEP and drawn as a ladder', async () => {
    const sessionId = await fx.createSession({ phoneNumber: fx.openNumber });
    const caller = await startSipp({ scenario: 'uac-call.xml', target: `127.0.0.1:${fx.sipPort}`, service: fx.openNumber, durationMs: 300 });
    const r = await caller.done;
    expect(r.code, r.errors).toBe(0);
    const call = await eventually(
      async () => (await fx.db.query<{ call_sid: string }>('SELECT call_sid FROM calls WHERE session_id = $1 AND ended_at IS NOT NULL', [sessionId])).rows[0],
    );
    // The caller's BYE and our 200 are the last two messages.
    const trace = await eventually(async () => {
      await fx.svc.capture?.flush();
      const rows = await getSipTrace(fx.db, call.call_sid);
      return rows.some((m) => m.status === 200 && m.cseq.endsWith('BYE')) ? rows : null;
    }, 20_000);
    const flow = trace.map((m) => `${m.direction} ${m.method ?? m.status}`);
    expect(flow.slice(0, 3)).toEqual(['in INVITE', 'out 100', 'out 180']);
    expect(flow).toContain('out 200');
    expect(flow).toContain('in ACK');
    expect(flow.slice(-2)).toEqual(['in BYE', 'out 200']);
    const invite = defined(trace[0], 'captured INVITE');
    expect(invite).toMatchObject({ transport: 'UDP', dst_address: '127.0.0.1', dst_port: fx.sipPort, src_address: '127.0.0.1', to_user: fx.openNumber });
    expect(invite.raw).toMatch(/^INVITE sip:/);
    expect(trace[1]).toMatchObject({ src_port: fx.sipPort, dst_port: invite?.src_port });

    for (const q of [{ callId: call.call_sid }, { number: fx.openNumber }, { sessionId }]) {
      const found = await searchSipCalls(fx.db, q);
      expect(found.map((c) => c.call_id)).toContain(call.call_sid);
    }
    expect((await searchSipCalls(fx.db, { sessionId }))[0]).toMatchObject({ session_id: sessionId, messages: trace.length });

    // HEP: one packet per captured message, grouped by the Call-ID.
    const mine = await eventually(() => {
      const p = hep.map(decodeHep).filter((c) => c.get(HEP_CHUNK.correlationId)?.toString() === call.call_sid);
      return p.length >= trace.length ? p : null;
    });
    expect(mine[0]?.get(HEP_CHUNK.payload)?.toString()).toMatch(/^INVITE sip:/);

    const cli = await runCli(fx.config, ['admin', 'calls', 'trace', call.call_sid]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`Call-ID: ${call.call_sid}`);
    expect(cli.stdout).toMatch(/\+0\.000s\s+\|-+ INVITE \(SDP\) -+>\|/);
    expect(cli.stdout).toMatch(/\|<-+ 200 OK \(SDP\) -+\|/);
    const missing = await runCli(fx.config, ['admin', 'calls', 'trace', 'no-such-call']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no SIP messages captured/);
  }, 120_000);

  it('keeps each message as it was on the wire: the text received (compact headers, spacing) and the bytes sent', async () => {
    const phone = dgram.createSocket('udp4');
    const received: string[] = [];
    phone.on('message', (d) => received.push(d.toString('latin1')));
    await new Promise<void>((r) => phone.bind(0, '127.0.0.1', r));
    try {
      const port = phone.address().port;
      const callId = `wire-text-${Date.now()}`;
      // Compact header forms and spacing a re-serialized message would not reproduce.
      const invite = [
        `INVITE sip:+19990000001@127.0.0.1:${fx.sipPort} SIP/2.0`,
        `v: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK-wire-1;rport`,
        'f:   <sip:wire@127.0.0.1>;tag=w1',
        't: <sip:+19990000001@127.0.0.1>',
        `i: ${callId}`,
        'CSeq: 1 INVITE',
        `m: <sip:wire@127.0.0.1:${port}>`,
        'Max-Forwards: 70',
        'l: 0',
        '',
        '',
      ].join('\r\n');
      phone.send(Buffer.from(invite, 'latin1'), fx.sipPort, '127.0.0.1');
      await eventually(() => received.some((d) => /^SIP\/2\.0 [2-6]\d\d /.test(d)));
      const trace = await eventually(async () => {
        await fx.svc.capture?.flush();
        const rows = await getSipTrace(fx.db, callId);
        return rows.some((m) => m.direction === 'out' && (m.status ?? 0) >= 200) ? rows : null;
      });
      expect(trace[0]).toMatchObject({ direction: 'in', method: 'INVITE', src_port: port });
      expect(trace[0]?.raw).toBe(invite);
      const sent = trace.filter((m) => m.direction === 'out');
      expect(sent.length).toBeGreaterThan(0);
      for (const m of sent) expect(received).toContain(m.raw);
    } finally {
      phone.close();
    }
  });

  it('writes any text the wire can carry back unchanged (array literals built by hand)', async () => {
    const raws = [
      'INVITE sip:a@b SIP/2.0\r\nFrom: "Quote \\"inside\\"" <sip:a@b>\r\n\r\n',
      'back\\slash \\\\ twice, {braces}, commas, "quotes", NULL',
      'NULL',
      '',
      'ünïcödé ✓ and a tab\there',
    ];
    const b = emptySipMessageBatch();
    // Recent: the retention test below purges only what is older than 24 h.
    const at = Date.now() - 60_000;
    for (const [i, raw] of raws.entries()) {
      b.capturedAtMs.push(at + i);
      b.callId.push('literal-call, "odd" {id}');
      b.direction.push(i % 2 ? 'out' : 'in');
      b.transport.push('UDP');
      b.srcAddress.push('::1');
      b.srcPort.push(5060 + i);
      b.dstAddress.push('192.0.2.1');
      b.dstPort.push(5070);
      b.method.push(i % 2 ? null : 'INVITE');
      b.status.push(i % 2 ? 200 : null);
      b.cseq.push(`${i} INVITE`);
      b.fromUser.push(i === 2 ? null : 'NULL');
      b.toUser.push('+1555\\0100');
      b.raw.push(raw);
    }
    await insertSipMessageBatch(fx.db, b);
    const rows = await getSipTrace(fx.db, 'literal-call, "odd" {id}');
    expect(rows.map((r) => r.raw)).toEqual(raws);
    expect(rows.map((r) => r.captured_at.getTime())).toEqual(raws.map((_, i) => at + i));
    expect(rows.map((r) => [r.method, r.status, r.src_port, r.from_user, r.to_user])).toEqual(
      raws.map((_, i) => [i % 2 ? null : 'INVITE', i % 2 ? 200 : null, 5060 + i, i === 2 ? null : 'NULL', '+1555\\0100']),
    );
  });

  it('writes on a connection of its own: an exhausted call-path pool does not hold capture up', async () => {
    const pool = createPool(fx.config.databaseUrl, fx.config.databaseSchema, undefined, 1);
    const held = await pool.connect(); // the pool's only connection, busy as under a call-path burst
    const cap = new SipCapture({ db: pool, log: { warn() {} }, queueSize: 10, batchSize: 10 });
    try {
      const bye =
        'BYE sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5062;branch=z9hG4bKown\r\nFrom: <sip:a@127.0.0.1>;tag=1\r\nTo: <sip:x@127.0.0.1>;tag=2\r\nCall-ID: own-connection-call\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n';
      const m = sip.parse(bye);
      if (!m) throw new Error('test message does not parse');
      cap.record('in', m, bye, 'udp', { address: '127.0.0.1', port: 5060 }, { address: '127.0.0.1', port: 5062 });
      await cap.flush();
      expect(cap.counts).toMatchObject({ captured: 1, written: 1, dropped: 0 });
      expect((await getSipTrace(fx.db, 'own-connection-call')).map((r) => r.method)).toEqual(['BYE']);
    } finally {
      await cap.close();
      held.release();
      await pool.end();
    }
  });

  it('purges messages older than the retention', async () => {
    await fx.db.query(`INSERT INTO sip_messages (captured_at, call_id, direction, transport, src_address, src_port, dst_address, dst_port, method, cseq, raw)
      VALUES (now() - interval '25 hours', 'old-call', 'in', 'UDP', '192.0.2.1', 5060, '192.0.2.2', 5060, 'INVITE', '1 INVITE', 'INVITE sip:x@y SIP/2.0')`);
    const keep = (await fx.db.query('SELECT count(*)::int AS n FROM sip_messages WHERE call_id <> $1', ['old-call'])).rows[0].n as number;
    expect(await purgeSipMessages(fx.db, 24, 1000)).toBe(1);
    expect((await fx.db.query('SELECT count(*)::int AS n FROM sip_messages')).rows[0].n).toBe(keep);
  });
});
