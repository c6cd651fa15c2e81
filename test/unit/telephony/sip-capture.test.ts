// SIP capture pieces without a database: the HEP v3 encoder (read back from a real UDP socket and
// walked chunk by chunk here, independently of decodeHep), the ladder diagram, and the bounded
// queue that drops and counts instead of making the call path wait.
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import sip, { type SipMessage } from 'sip';
import { HepSender, decodeHep, encodeHep } from '../../../src/telephony/capture/hep.js';
import { renderLadder } from '../../../src/telephony/capture/ladder.js';
import { SipCapture, userOf } from '../../../src/telephony/capture/sip-capture.js';
import { sipMessageBatchRows, type Db, type SipMessageRow } from '../../../src/store/index.js';

const INVITE =
  'INVITE sip:+15550100@192.0.2.1 SIP/2.0\r\nVia: SIP/2.0/UDP 203.0.113.9:5062;branch=z9hG4bK1\r\nFrom: <sip:alice@203.0.113.9>;tag=a1\r\nTo: <sip:+15550100@192.0.2.1>\r\nCall-ID: cid-1@x\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n';

/** The test's own HEP3 reader: type → chunk body, with vendor ids checked. */
function chunks(buf: Buffer): { get(t: number): Buffer; has(t: number): boolean } {
  expect(buf.subarray(0, 4).toString('latin1')).toBe('HEP3');
  expect(buf.readUInt16BE(4)).toBe(buf.length);
  const out = new Map<number, Buffer>();
  for (let off = 6; off < buf.length;) {
    const vendor = buf.readUInt16BE(off);
    const type = buf.readUInt16BE(off + 2);
    const len = buf.readUInt16BE(off + 4);
    expect(vendor).toBe(0);
    out.set(type, buf.subarray(off + 6, off + len));
    off += len;
  }
  return {
    get(t) {
      const b = out.get(t);
      if (!b) throw new Error(`no chunk ${t}`);
      return b;
    },
    has: (t) => out.has(t),
  };
}

const sockets: dgram.Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
});

describe('HEP v3', () => {
  it('sends a captured message to a collector as HEP3 chunks', async () => {
    const collector = dgram.createSocket('udp4');
    sockets.push(collector);
    await new Promise<void>((r) => collector.bind(0, '127.0.0.1', r));
    const got = new Promise<Buffer>((r) => collector.once('message', r));
    const sender = new HepSender('127.0.0.1', collector.address().port);
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    sender.send({
      at,
      transport: 'UDP',
      src: { address: '203.0.113.9', port: 5062 },
      dst: { address: '192.0.2.1', port: 5060 },
      payload: INVITE,
      callId: 'cid-1@x',
      agentId: 2001,
    });
    const c = chunks(await got);
    sender.close();
    expect(c.get(1)).toEqual(Buffer.from([2])); // AF_INET
    expect(c.get(2)).toEqual(Buffer.from([17])); // UDP
    expect([...c.get(3)]).toEqual([203, 0, 113, 9]);
    expect([...c.get(4)]).toEqual([192, 0, 2, 1]);
    expect(c.get(7).readUInt16BE(0)).toBe(5062);
    expect(c.get(8).readUInt16BE(0)).toBe(5060);
    expect(c.get(9).readUInt32BE(0)).toBe(Math.floor(at.getTime() / 1000));
    expect(c.get(10).readUInt32BE(0)).toBe(678_000);
    expect(c.get(11)).toEqual(Buffer.from([1])); // SIP
    expect(c.get(12).readUInt32BE(0)).toBe(2001);
    expect(c.get(15).toString()).toBe(INVITE);
    expect(c.get(17).toString()).toBe('cid-1@x');
    expect(sender.sent).toBe(1);
  });

  it('carries IPv6 (and a v4 peer as v4-mapped) in 16-byte address chunks, TCP as protocol 6', () => {
    const c = chunks(
      encodeHep({
        at: new Date(0),
        transport: 'TCP',
        src: { address: '2001:db8::5', port: 5060 },
        dst: { address: '198.51.100.7', port: 5070 },
        payload: 'x',
        callId: 'c',
        agentId: 0,
      }),
    );
    expect(c.get(1)).toEqual(Buffer.from([10]));
    expect(c.get(2)).toEqual(Buffer.from([6]));
    expect(c.get(5).toString('hex')).toBe('20010db8000000000000000000000005');
    expect(c.get(6).toString('hex')).toBe('00000000000000000000ffffc6336407');
    expect(c.has(3)).toBe(false);
  });

  it('decodeHep rejects what is not a well-formed HEP3 packet', () => {
    const good = encodeHep({
      at: new Date(0),
      transport: 'UDP',
      src: { address: '127.0.0.1', port: 1 },
      dst: { address: '127.0.0.1', port: 2 },
      payload: 'p',
      callId: 'c',
      agentId: 1,
    });
    expect(decodeHep(good).get(15)?.toString()).toBe('p');
    expect(() => decodeHep(Buffer.from('HEP2\x00\x06'))).toThrow(/not a HEP3/);
    expect(() => decodeHep(good.subarray(0, good.length - 1))).toThrow(/length/);
  });

  it('skips (and counts) a message too large for one HEP3 packet instead of throwing on the call path', () => {
    const big = { at: new Date(0), transport: 'TCP', src: { address: '127.0.0.1', port: 1 }, dst: { address: '127.0.0.1', port: 2 }, callId: 'c', agentId: 1 };
    expect(() => encodeHep({ ...big, payload: 'x'.repeat(70_000) })).toThrow(RangeError);
    const sender = new HepSender('127.0.0.1', 9);
    sender.send({ ...big, payload: 'x'.repeat(70_000) });
    sender.close();
    expect(sender.failed).toBe(1);
    expect(sender.sent).toBe(0);
  });
});

function row(over: Partial<SipMessageRow>): SipMessageRow {
  return {
    captured_at: new Date(1_000_000),
    call_id: 'cid-1@x',
    direction: 'in',
    transport: 'UDP',
    src_address: '203.0.113.9',
    src_port: 5062,
    dst_address: '192.0.2.1',
    dst_port: 5060,
    method: 'INVITE',
    status: null,
    cseq: '1 INVITE',
    from_user: 'alice',
    to_user: '+15550100',
    raw: INVITE,
    ...over,
  };
}

describe('ladder diagram', () => {
  it('draws one column per endpoint and an arrow per message with its time offset', () => {
    const back = { src_address: '192.0.2.1', src_port: 5060, dst_address: '203.0.113.9', dst_port: 5062, direction: 'out' as const, method: null };
    const text = renderLadder([
      row({}),
      row({ ...back, captured_at: new Date(1_000_002), status: 100, raw: 'SIP/2.0 100 Trying\r\n\r\n' }),
      row({ ...back, captured_at: new Date(1_001_500), status: 200, raw: 'SIP/2.0 200 OK\r\nContent-Type: application/sdp\r\n\r\nv=0\r\n' }),
      row({ captured_at: new Date(1_001_510), method: 'ACK', cseq: '1 ACK' }),
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('Call-ID: cid-1@x');
    const header = lines[3] ?? '';
    expect(header).toContain('203.0.113.9:5062');
    expect(header).toContain('192.0.2.1:5060');
    expect(header.indexOf('203.0.113.9')).toBeLessThan(header.indexOf('192.0.2.1'));
    const arrows = lines.slice(5, 9);
    expect(arrows[0]).toMatch(/^\+0\.000s\s+\|-+ INVITE -+>\| {2}UDP$/);
    expect(arrows[1]).toMatch(/^\+0\.002s\s+\|<-+ 100 Trying -+\| {2}UDP$/);
    expect(arrows[2]).toMatch(/^\+1\.500s\s+\|<-+ 200 OK \(SDP\) -+\| {2}UDP$/);
    expect(arrows[3]).toMatch(/^\+1\.510s\s+\|-+ ACK -+>\| {2}UDP$/);
    // The lanes line up: every arrow starts and ends at the columns' bars.
    const bars = (l: string) => [l.indexOf('|'), l.lastIndexOf('|')];
    for (const a of arrows) expect(bars(a)).toEqual(bars(lines[4] ?? ''));
  });

  it('says so when nothing was captured', () => {
    expect(renderLadder([])).toMatch(/no SIP messages/);
  });
});

function parse(text: string): SipMessage {
  const m = sip.parse(text);
  if (!m) throw new Error('test message does not parse');
  return m;
}

describe('userOf (From/To user parts for search)', () => {
  it('takes the user part of sip: and sips: URIs, decoded, without user parameters or password', () => {
    expect(userOf('sip:+15550100@192.0.2.1:5060;transport=udp')).toBe('+15550100');
    expect(userOf('sips:alice@example.com')).toBe('alice');
    expect(userOf('sip:bob:secret@example.com')).toBe('bob');
    expect(userOf('sip:%2B15550100@example.com')).toBe('+15550100');
    expect(userOf('sip:+15550100;npdi;rn=+15550199@example.com')).toBe('+15550100');
    expect(userOf('sip:bad%zz@example.com')).toBe('bad%zz');
    expect(userOf({ user: 'carol' })).toBe('carol');
  });

  it('is null where there is no user part or no SIP URI', () => {
    expect(userOf('sip:example.com')).toBeNull();
    expect(userOf('sip:@example.com')).toBeNull();
    expect(userOf('tel:+15550100')).toBeNull();
    expect(userOf(undefined)).toBeNull();
    expect(userOf({})).toBeNull();
  });
});

describe('SipCapture queue', () => {
  const local = { address: '192.0.2.1', port: 5060 };
  const remote = { address: '203.0.113.9', port: 5062 };

  it('never waits for a stuck database: a full queue drops and counts', async () => {
    const writes: SipMessageRow[][] = [];
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const cap = new SipCapture({
      db: null as unknown as Db,
      log: { warn() {} },
      queueSize: 10,
      batchSize: 5,
      flushMs: 1,
      write: async (batch) => {
        writes.push(sipMessageBatchRows(batch));
        await stuck;
      },
    });
    const msg = parse(INVITE);
    const t0 = performance.now();
    for (let i = 0; i < 1000; i++) cap.record('in', msg, INVITE, 'udp', local, remote);
    expect(performance.now() - t0).toBeLessThan(2000);
    // One batch of 5 went to the (stuck) writer, 10 wait in the queue, the rest were dropped.
    expect(writes.length).toBe(1);
    expect(cap.counts.captured).toBe(15);
    expect(cap.counts.dropped).toBe(985);
    release();
    await cap.flush();
    expect(cap.counts.written).toBe(15);
    expect(writes.map((w) => w.length)).toEqual([5, 5, 5]);
  });

  it('records direction, addresses, method or status, CSeq and the From/To users; skips OPTIONS', async () => {
    const rows: SipMessageRow[] = [];
    const cap = new SipCapture({
      db: null as unknown as Db,
      log: { warn() {} },
      queueSize: 100,
      batchSize: 100,
      flushMs: 1,
      write: async (batch) => void rows.push(...sipMessageBatchRows(batch)),
    });
    cap.record('in', parse(INVITE), INVITE, 'udp', local, remote);
    const ringing =
      'SIP/2.0 180 Ringing\r\nVia: SIP/2.0/UDP 203.0.113.9:5062;branch=z9hG4bK1\r\nFrom: <sip:alice@203.0.113.9>;tag=a1\r\nTo: <sip:+15550100@192.0.2.1>;tag=b2\r\nCall-ID: cid-1@x\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n';
    cap.record('out', parse(ringing), ringing, 'udp', local, remote);
    const options = INVITE.replace(/INVITE/g, 'OPTIONS');
    cap.record('in', parse(options), options, 'udp', local, remote);
    await cap.flush();
    expect(rows.map((r) => [r.direction, r.src_address, r.dst_address, r.method, r.status, r.cseq, r.from_user, r.to_user, r.transport])).toEqual([
      ['in', '203.0.113.9', '192.0.2.1', 'INVITE', null, '1 INVITE', 'alice', '+15550100', 'UDP'],
      ['out', '192.0.2.1', '203.0.113.9', null, 180, '1 INVITE', 'alice', '+15550100', 'UDP'],
    ]);
    // The text as on the wire, not a re-serialization of the parsed message.
    expect(rows.map((r) => r.raw)).toEqual([INVITE, ringing]);
  });

  it('writes full batches at once and holds a partial batch for its timer (or a flush), not a chain of small INSERTs', async () => {
    const writes: number[] = [];
    const cap = new SipCapture({
      db: null as unknown as Db,
      log: { warn() {} },
      queueSize: 100,
      batchSize: 3,
      flushMs: 600_000,
      write: async (batch) => void writes.push(batch.raw.length),
    });
    const msg = parse(INVITE);
    for (let i = 0; i < 7; i++) cap.record('in', msg, INVITE, 'udp', local, remote);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(writes).toEqual([3, 3]);
    expect(cap.queued).toBe(1);
    await cap.flush();
    expect(writes).toEqual([3, 3, 1]);
    expect(cap.counts).toEqual({ captured: 7, written: 7, dropped: 0 });
    await cap.close();
  });

  it('counts a failed write as dropped and keeps capturing', async () => {
    let fail = true;
    const written: number[] = [];
    const cap = new SipCapture({
      db: null as unknown as Db,
      log: { warn() {} },
      queueSize: 100,
      batchSize: 2,
      write: async (batch) => {
        if (fail) throw new Error('database gone');
        written.push(batch.raw.length);
      },
    });
    const msg = parse(INVITE);
    cap.record('in', msg, INVITE, 'udp', local, remote);
    cap.record('in', msg, INVITE, 'udp', local, remote);
    await cap.flush();
    fail = false;
    cap.record('in', msg, INVITE, 'udp', local, remote);
    await cap.flush();
    expect(cap.counts).toEqual({ captured: 3, written: 1, dropped: 2 });
    expect(written).toEqual([1]);
    await cap.close();
  });
});
