import { describe, expect, it } from 'vitest';
import { DEFAULT_SIP_LIMITS, frameDatagram, StreamFramer, type FrameResult } from '../../../src/telephony/sip/framing.js';
import { defined } from '../../helpers/defined.js';

const L = DEFAULT_SIP_LIMITS;
const head = (extra: string[] = [], method = 'OPTIONS', uri = 'sip:x@127.0.0.1', version = 'SIP/2.0') =>
  [
    `${method} ${uri} ${version}`,
    'Via: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKu1',
    'From: <sip:a@127.0.0.1>;tag=1',
    'To: <sip:x@127.0.0.1>',
    'Call-ID: unit-1',
    `CSeq: 1 ${method}`,
    'Max-Forwards: 70',
    ...extra,
  ].join('\r\n');

const msg = (extra: string[] = [], body = '', o: { method?: string; uri?: string; version?: string } = {}) =>
  Buffer.from(`${head(extra, o.method, o.uri, o.version)}\r\n\r\n${body}`, 'latin1');

function rejection(r: FrameResult | null | undefined): { status: number; reason: string; fault: string; reply: string | null } {
  if (!r || r.kind !== 'reject') throw new Error(`expected a rejection, got ${JSON.stringify(r)}`);
  return r.rejection;
}

describe('frameDatagram', () => {
  it('passes a well-formed request and keeps the body to Content-Length', () => {
    const r = frameDatagram(msg(['Content-Length: 3'], 'abcdef'), L);
    expect(r?.kind).toBe('message');
    if (r?.kind === 'message') expect(r.text.endsWith('\r\n\r\nabc')).toBe(true);
  });

  it('ignores CRLF keep-alives', () => {
    expect(frameDatagram(Buffer.from('\r\n\r\n'), L)).toBeNull();
  });

  it('refuses an oversized datagram before reading it', () => {
    const r = rejection(frameDatagram(Buffer.alloc(65_000, '\r\n '), L));
    expect(r.fault).toBe('datagram_too_large');
  });

  it('scans a datagram of whitespace runs within the cap in linear time', () => {
    const data = Buffer.from('\r\n '.repeat(Math.floor(L.maxDatagramBytes / 3)), 'latin1');
    const t0 = performance.now();
    const r = frameDatagram(data, L);
    expect(performance.now() - t0).toBeLessThan(100); // generous: linear scan of 16 KB
    expect(r === null || r.kind === 'reject').toBe(true);
  });

  it.each([
    [['Content-Length: abc'], 400, 'Bad Content-Length'],
    [['Content-Length: -1'], 400, 'Bad Content-Length'],
    [['Content-Length: 99999999999'], 400, 'Bad Content-Length'],
    [['Content-Length: 0', 'Content-Length: 5'], 400, 'Conflicting Content-Length'],
    [['Content-Length: 50'], 400, 'Content-Length Exceeds Message'],
    [['Content-Length: 999999'], 413, 'Request Entity Too Large'],
  ])('answers Content-Length %j with %i %s', (extra, status, reason) => {
    const r = rejection(frameDatagram(msg(extra), L));
    expect([r.status, r.reason]).toEqual([status, reason]);
    expect(r.reply).toMatch(new RegExp(`^SIP/2.0 ${status} ${reason}\r\n`));
    expect(r.reply).toContain('Call-ID: unit-1');
    expect(r.reply).toMatch(/To: <sip:x@127.0.0.1>;tag=/);
  });

  it('answers 505 for another SIP version and 416 for another URI scheme', () => {
    expect(rejection(frameDatagram(msg([], '', { version: 'SIP/7.0' }), L)).status).toBe(505);
    expect(rejection(frameDatagram(msg([], '', { uri: 'http://example.com/' }), L)).status).toBe(416);
  });

  it('names missing and duplicated headers', () => {
    const noCallId = Buffer.from(head().replace('Call-ID: unit-1\r\n', '') + '\r\n\r\n');
    expect(rejection(frameDatagram(noCallId, L)).reason).toBe('Missing Call-ID Header');
    expect(rejection(frameDatagram(msg(['CSeq: 2 OPTIONS']), L)).reason).toBe('Duplicate CSeq Header');
    const badMf = Buffer.from(head().replace('Max-Forwards: 70', 'Max-Forwards: ten') + '\r\n\r\n');
    expect(rejection(frameDatagram(badMf, L)).reason).toBe('Bad Max-Forwards');
  });

  it('refuses a bad request line and a non-numeric CSeq', () => {
    expect(rejection(frameDatagram(msg([], '', { uri: 'sip:a b' }), L)).reason).toBe('Malformed Request Line');
    const badCseq = Buffer.from(head().replace('CSeq: 1 OPTIONS', 'CSeq: x OPTIONS') + '\r\n\r\n');
    expect(rejection(frameDatagram(badCseq, L)).reason).toBe('Bad CSeq');
  });

  it('does not answer what it cannot route back (no Via) or an ACK', () => {
    const noVia = Buffer.from(head(['Content-Length: x']).replace(/Via:[^\r]*\r\n/, '') + '\r\n\r\n');
    expect(rejection(frameDatagram(noVia, L)).reply).toBeNull();
    expect(rejection(frameDatagram(msg(['Content-Length: x'], '', { method: 'ACK' }), L)).reply).toBeNull();
  });
});

describe('StreamFramer', () => {
  it('frames messages split across chunks and back to back', () => {
    const f = new StreamFramer(L);
    const one = msg(['Content-Length: 4'], 'body').toString('latin1');
    const all = one + one;
    const out: FrameResult[] = [];
    for (let i = 0; i < all.length; i += 7) out.push(...f.push(Buffer.from(all.slice(i, i + 7), 'latin1')));
    expect(out.map((r) => r.kind)).toEqual(['message', 'message']);
    expect(f.pending).toBe(0);
  });

  it('requires Content-Length on a stream and stops reading after a framing fault', () => {
    const f = new StreamFramer(L);
    const out = f.push(msg());
    expect(rejection(out[0]).reason).toBe('Missing Content-Length');
    expect(f.broken).toBe(true);
    expect(f.push(msg(['Content-Length: 0']))).toEqual([]);
  });

  it('closes on Content-Length: abc instead of buffering what follows', () => {
    const f = new StreamFramer(L);
    const out = f.push(msg(['Content-Length: abc']));
    expect(rejection(out[0]).fault).toBe('bad_content_length');
    expect(f.broken).toBe(true);
    f.push(Buffer.alloc(1_000_000, 0x41));
    expect(f.pending).toBe(0);
  });

  it('refuses a header block that never ends once it passes the cap', () => {
    const f = new StreamFramer(L);
    let out: FrameResult[] = [];
    for (let i = 0; i < 40 && out.length === 0; i++) out = f.push(Buffer.alloc(1024, '\r\n '));
    // Leading CRLFs are keep-alives; the spaces make it a header block that never ends.
    expect(rejection(out[0]).fault).toBe('header_too_large');
  });

  it('answers a message refused for its content but keeps the stream when its length is sound', () => {
    const f = new StreamFramer(L);
    const bad = msg(['Content-Length: 2'], 'xy', { version: 'SIP/3.0' });
    const good = msg(['Content-Length: 0']);
    const out = f.push(Buffer.concat([bad, good]));
    expect(rejection(out[0]).status).toBe(505);
    expect(defined(out[1], 'second result').kind).toBe('message');
    expect(f.broken).toBe(false);
  });
});
