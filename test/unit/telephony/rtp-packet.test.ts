import { describe, it, expect } from 'vitest';
import { parseRtp, parseRtpHeader, rtpHeader, serializeRtp, SequenceUnwrapper } from '../../../src/telephony/rtp/packet.js';
import { mulawDecodeInto, mulawEncode } from '../../../src/media/g711.js';
import { DtmfDecoder, digitPackets, parseTelephoneEvent } from '../../../src/telephony/rtp/dtmf.js';
import { defined } from '../../helpers/defined.js';

describe('RTP packet', () => {
  it('round-trips the fixed header and payload', () => {
    const payload = new Uint8Array([1, 2, 3, 4]);
    const buf = serializeRtp({ marker: true, payloadType: 8, sequence: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef, payload });
    const p = parseRtp(buf)!;
    expect(p).toMatchObject({ marker: true, payloadType: 8, sequence: 65535, timestamp: 0xfffffff0, ssrc: 0xdeadbeef });
    expect([...p.payload]).toEqual([1, 2, 3, 4]);
  });

  it('skips CSRCs, header extensions and padding', () => {
    const buf = new Uint8Array(12 + 4 + 8 + 3 + 2);
    buf[0] = 0x80 | 0x20 | 0x10 | 1; // padding, extension, 1 CSRC
    buf[1] = 0;
    buf[16 + 3] = 1; // extension length 1 word
    buf.set([9, 9, 9], 24);
    buf[buf.length - 1] = 2; // two bytes of padding
    const p = parseRtp(buf)!;
    expect([...p.payload]).toEqual([9, 9, 9]);
  });

  it('parses into one reused header, giving the payload bounds the decoder reads in place', () => {
    const h = rtpHeader();
    const pcm = Int16Array.from({ length: 160 }, (_, i) => (i - 80) * 300);
    const first = serializeRtp({ marker: true, payloadType: 0, sequence: 7, timestamp: 160, ssrc: 5, payload: mulawEncode(pcm) });
    expect(parseRtpHeader(first, h)).toBe(true);
    expect(h).toMatchObject({ marker: true, payloadType: 0, sequence: 7, timestamp: 160, ssrc: 5, payloadStart: 12, payloadEnd: 172 });
    const decoded = mulawDecodeInto(first, new Int16Array(160), h.payloadStart, h.payloadEnd);
    expect(decoded).toEqual(mulawDecodeInto(mulawEncode(pcm), new Int16Array(160)));
    const second = serializeRtp({ marker: false, payloadType: 8, sequence: 8, timestamp: 320, ssrc: 5, payload: new Uint8Array(3) });
    expect(parseRtpHeader(second, h)).toBe(true);
    expect(h).toMatchObject({ marker: false, payloadType: 8, sequence: 8, timestamp: 320, payloadStart: 12, payloadEnd: 15 });
  });

  it('rejects non-RTP datagrams and RTCP', () => {
    expect(parseRtp(new Uint8Array(5))).toBeNull();
    expect(parseRtp(new Uint8Array(20))).toBeNull(); // version 0
    const rtcp = new Uint8Array(12);
    rtcp[0] = 0x80;
    rtcp[1] = 200;
    expect(parseRtp(rtcp)).toBeNull();
    const badExt = new Uint8Array(14);
    badExt[0] = 0x90;
    expect(parseRtp(badExt)).toBeNull();
  });

  it('unwraps 16-bit sequence numbers across the wrap, including late packets', () => {
    const u = new SequenceUnwrapper(16);
    expect(u.unwrap(65534)).toBe(65534);
    expect(u.unwrap(65535)).toBe(65535);
    expect(u.unwrap(1)).toBe(65537);
    expect(u.unwrap(0)).toBe(65536);
    expect(u.unwrap(65533)).toBe(65533);
    expect(u.unwrap(2)).toBe(65538);
  });
});

describe('RFC 4733 telephone-event', () => {
  it('encodes a digit as marker start, updates and three end packets', () => {
    const pk = digitPackets('5', 100);
    expect(defined(pk[0], 'start packet').marker).toBe(true);
    expect(pk.slice(1).every((p) => !p.marker)).toBe(true);
    const ends = pk.filter((p) => parseTelephoneEvent(p.payload)!.end);
    expect(ends).toHaveLength(3);
    expect(parseTelephoneEvent(defined(ends[0], 'end packet').payload)).toMatchObject({ event: 5, duration: 800 });
  });

  it('reports each digit once, without relying on the marker bit', () => {
    const dec = new DtmfDecoder();
    const seen: string[] = [];
    // Sender that never sets the marker: "1" then "1" again (new timestamp), then "#".
    for (const [ts, digit] of [
      [1000, '1'],
      [5000, '1'],
      [9000, '#'],
    ] as const) {
      for (const p of digitPackets(digit, 100)) {
        const d = dec.push(ts, p.payload);
        if (d) seen.push(d.digit);
      }
    }
    expect(seen).toEqual(['1', '1', '#']);
  });

  it('ignores end retransmissions and reports a digit whose start was lost', () => {
    const dec = new DtmfDecoder();
    const end = digitPackets('9', 100).filter((p) => parseTelephoneEvent(p.payload)!.end);
    const out = end.map((p) => dec.push(42, p.payload)).filter(Boolean);
    expect(out).toEqual([{ digit: '9', durationMs: 100 }]);
  });
});
