// What SIP capture costs per captured message, as CPU time (holds on a loaded machine): the seven
// messages of a call setup and teardown (INVITE with SDP, 100, 180, 200 with SDP, ACK, BYE, 200),
// parsed once and with their wire text as the stack hands them over, go through SipCapture.record() (the call path's share)
// and are then written to PostgreSQL in the capture's own batches (the writer's share, in this
// process and in the PostgreSQL backend that runs the INSERTs). Alternated rounds, medians.
//   npx tsx bench/sip/capture-cost.ts [messages per round, default 20000] [rounds, default 5]
// Prints figures; asserts nothing.
import pino from 'pino';
import sip, { type SipMessage } from 'sip';
import { createPool, migrate } from '../../src/store/index.js';
import { SipCapture } from '../../src/telephony/capture/sip-capture.js';
import { buildSdp } from '../../src/telephony/sdp/sdp.js';
import { testConfig, dropTestState } from '../../test/helpers/gateway.js';
import { pgBackendCpu, pgCpuDelta } from './pg-cpu.js';
import { defined } from '../defined.js';

const perRound = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 5);

/** A carrier's G.711 offer or our answer (the same bytes on the wire as a real call's). */
const sdp = (address: string, port: number) =>
  buildSdp({
    address,
    port,
    sessionId: '1',
    sessionVersion: 1,
    codecs: [
      { payloadType: 8, name: 'PCMA' },
      { payloadType: 0, name: 'PCMU' },
    ],
    dtmfPayloadType: 101,
    direction: 'sendrecv',
  });

function callMessages(n: number): Array<{ m: SipMessage; wire: string }> {
  const callId = `${n}-bench@203.0.113.10`;
  const dialog = [
    'Via: SIP/2.0/UDP 203.0.113.10:5060;branch=z9hG4bK776asdhds;rport=5060;received=203.0.113.10',
    'From: "caller" <sip:+15550001111@203.0.113.10:5060>;tag=1928301774',
    `Call-ID: ${callId}`,
  ];
  const to = 'To: <sip:+15550100@198.51.100.1:5060>';
  const toTag = `${to};tag=a6c85cf`;
  const req = (line: string, cseq: string, toH: string, extra: string[], body = '') =>
    [line, ...dialog, toH, `CSeq: ${cseq}`, 'Max-Forwards: 70', ...extra, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
  const res = (status: string, cseq: string, toH: string, extra: string[], body = '') =>
    [`SIP/2.0 ${status}`, ...dialog, toH, `CSeq: ${cseq}`, ...extra, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
  const contact = ['Contact: <sip:+15550100@198.51.100.1:5060>', 'User-Agent: voxbridge'];
  const texts = [
    req(
      'INVITE sip:+15550100@198.51.100.1:5060 SIP/2.0',
      '1 INVITE',
      to,
      ['Contact: <sip:sipp@203.0.113.10:5060>', 'Content-Type: application/sdp'],
      sdp('203.0.113.10', 6000),
    ),
    res('100 Trying', '1 INVITE', to, []),
    res('180 Ringing', '1 INVITE', toTag, contact),
    res('200 OK', '1 INVITE', toTag, [...contact, 'Content-Type: application/sdp'], sdp('198.51.100.1', 20000)),
    req('ACK sip:+15550100@198.51.100.1:5060 SIP/2.0', '1 ACK', toTag, []),
    req('BYE sip:+15550100@198.51.100.1:5060 SIP/2.0', '2 BYE', toTag, []),
    res('200 OK', '2 BYE', toTag, []),
  ];
  return texts.map((t) => {
    const m = sip.parse(t);
    if (!m) throw new Error(`bench message does not parse:\n${t}`);
    return { m, wire: t };
  });
}

const DIRECTIONS: Array<'in' | 'out'> = ['in', 'out', 'out', 'out', 'in', 'in', 'out'];
const local = { address: '198.51.100.1', port: 5060 };
const remote = { address: '203.0.113.10', port: 5060 };

const config = testConfig();
await migrate(config.databaseUrl, config.databaseSchema);
const db = createPool(config.databaseUrl, config.databaseSchema, undefined, 4);
const log = pino({ level: 'warn' });
// Distinct calls (a Call-ID each), parsed once, as the stack would hand them over.
const calls = Array.from({ length: 200 }, (_, i) => callMessages(i));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const results: { record: number[]; writer: number[]; pg: number[] } = { record: [], writer: [], pg: [] };
try {
  for (let round = 0; round < rounds + 1; round++) {
    const cap = new SipCapture({ db, log, queueSize: perRound + 10, batchSize: 200, flushMs: 250 });
    // Calls arrive a few at a time, as on a live gateway: record() runs between the writer's turns,
    // and the bench waits (no CPU) when the queue is ahead of PostgreSQL, so nothing piles up in memory.
    let recordUs = 0;
    const pg0 = pgBackendCpu();
    const all0 = process.cpuUsage();
    for (let i = 0; i < perRound;) {
      const c0 = process.cpuUsage();
      for (const end = Math.min(i + 70, perRound); i < end; i++) {
        const call = defined(calls[Math.floor(i / 7) % calls.length], 'call');
        const msg = defined(call[i % 7], 'message');
        cap.record(defined(DIRECTIONS[i % 7], 'direction'), msg.m, msg.wire, 'udp', local, remote);
      }
      const c = process.cpuUsage(c0);
      recordUs += c.user + c.system;
      await new Promise((r) => setImmediate(r));
      while (cap.queued > 1000) await new Promise((r) => setTimeout(r, 1));
    }
    await cap.flush();
    const all = process.cpuUsage(all0);
    const pgMs = pgCpuDelta(pg0, pgBackendCpu());
    if (cap.counts.written !== perRound) throw new Error(`wrote ${cap.counts.written} of ${perRound} (dropped ${cap.counts.dropped})`);
    await cap.close();
    if (round === 0) continue; // warm-up: compiles, the pool's connections
    results.record.push(recordUs / perRound);
    results.writer.push((all.user + all.system - recordUs) / perRound);
    results.pg.push((pgMs * 1000) / perRound);
    await db.query('TRUNCATE sip_messages');
  }
} finally {
  await db.end();
  await dropTestState(config);
}
const f = (xs: number[]) => `${median(xs).toFixed(1)} µs (rounds ${xs.map((x) => x.toFixed(1)).join(', ')})`;
console.log(`SIP capture, CPU per captured message, median of ${rounds} rounds × ${perRound} messages:`);
console.log(`  record() on the call path:        ${f(results.record)}`);
console.log(`  the rest in the gateway (writer, GC) ${f(results.writer)}`);
console.log(`  PostgreSQL backend (the INSERTs): ${f(results.pg)}`);
console.log(JSON.stringify({ bench: 'sip_capture_cost', recordUs: median(results.record), writerUs: median(results.writer), pgUs: median(results.pg) }));
process.exit(0);
