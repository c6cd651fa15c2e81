// RTP fixed header (RFC 3550 §5.1). Parsing copies no payload: a view, or its bounds in the datagram.

export interface RtpPacket {
  marker: boolean;
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  payload: Uint8Array;
}

export const RTP_HEADER_BYTES = 12;

/** The fixed header's fields and where the payload lies, filled in place by parseRtpHeader. */
export interface RtpHeader {
  marker: boolean;
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  /** The payload is buf[payloadStart, payloadEnd) (after CSRCs and extension, before padding). */
  payloadStart: number;
  payloadEnd: number;
}

/** An empty header to reuse with parseRtpHeader. */
export function rtpHeader(): RtpHeader {
  return { marker: false, payloadType: 0, sequence: 0, timestamp: 0, ssrc: 0, payloadStart: 0, payloadEnd: 0 };
}

/**
 * Reads an RTP datagram's header into `h` (the media path reuses one per leg: nothing is allocated per
 * packet); false for anything that is not RTP version 2 (RTCP, STUN, garbage), and `h` is then undefined.
 */
export function parseRtpHeader(buf: Uint8Array, h: RtpHeader): boolean {
  // Every index read below is bounds-checked first (12-byte header, extension and padding checks).
  if (buf.length < RTP_HEADER_BYTES) return false;
  const b0 = buf[0] ?? 0;
  if (b0 >> 6 !== 2) return false;
  const b1 = buf[1] ?? 0;
  const payloadType = b1 & 0x7f;
  // RTCP packet types 200..204 collide with marker+PT 72..76 (RFC 5761 §4): not audio for us.
  if (payloadType >= 72 && payloadType <= 76) return false;
  const csrcCount = b0 & 0x0f;
  let offset = RTP_HEADER_BYTES + csrcCount * 4;
  if (offset > buf.length) return false;
  if (b0 & 0x10) {
    // Header extension (RFC 3550 §5.3.1): 16-bit profile, 16-bit length in 32-bit words.
    if (offset + 4 > buf.length) return false;
    const words = ((buf[offset + 2] ?? 0) << 8) | (buf[offset + 3] ?? 0);
    offset += 4 + words * 4;
    if (offset > buf.length) return false;
  }
  let end = buf.length;
  if (b0 & 0x20) {
    const pad = buf[buf.length - 1] ?? 0;
    if (pad === 0 || offset + pad > end) return false;
    end -= pad;
  }
  h.marker = (b1 & 0x80) !== 0;
  h.payloadType = payloadType;
  h.sequence = ((buf[2] ?? 0) << 8) | (buf[3] ?? 0);
  h.timestamp = (((buf[4] ?? 0) << 24) | ((buf[5] ?? 0) << 16) | ((buf[6] ?? 0) << 8) | (buf[7] ?? 0)) >>> 0;
  h.ssrc = (((buf[8] ?? 0) << 24) | ((buf[9] ?? 0) << 16) | ((buf[10] ?? 0) << 8) | (buf[11] ?? 0)) >>> 0;
  h.payloadStart = offset;
  h.payloadEnd = end;
  return true;
}

/** Parses an RTP datagram into a new packet whose payload is a view of `buf`; null when it is not RTP. */
export function parseRtp(buf: Uint8Array): RtpPacket | null {
  const h = rtpHeader();
  if (!parseRtpHeader(buf, h)) return null;
  const { marker, payloadType, sequence, timestamp, ssrc } = h;
  return { marker, payloadType, sequence, timestamp, ssrc, payload: buf.subarray(h.payloadStart, h.payloadEnd) };
}

/** Writes an RTP header into `out` at `at` (no CSRC, no extension) and returns the header length. */
export function writeRtpHeader(
  out: Uint8Array,
  h: { marker: boolean; payloadType: number; sequence: number; timestamp: number; ssrc: number },
  at = 0,
): number {
  out[at] = 0x80;
  out[at + 1] = (h.marker ? 0x80 : 0) | (h.payloadType & 0x7f);
  out[at + 2] = (h.sequence >> 8) & 0xff;
  out[at + 3] = h.sequence & 0xff;
  out[at + 4] = (h.timestamp >>> 24) & 0xff;
  out[at + 5] = (h.timestamp >>> 16) & 0xff;
  out[at + 6] = (h.timestamp >>> 8) & 0xff;
  out[at + 7] = h.timestamp & 0xff;
  out[at + 8] = (h.ssrc >>> 24) & 0xff;
  out[at + 9] = (h.ssrc >>> 16) & 0xff;
  out[at + 10] = (h.ssrc >>> 8) & 0xff;
  out[at + 11] = h.ssrc & 0xff;
  return RTP_HEADER_BYTES;
}

/** Serializes a whole packet into a new buffer (tests, DTMF); the media path reuses buffers with writeRtpHeader. */
export function serializeRtp(p: RtpPacket): Uint8Array {
  const out = new Uint8Array(RTP_HEADER_BYTES + p.payload.length);
  writeRtpHeader(out, p);
  out.set(p.payload, RTP_HEADER_BYTES);
  return out;
}

/**
 * Extends a 16-bit sequence number (or 32-bit timestamp) to a monotonic number across wrap-around,
 * relative to the highest value seen (RFC 3550 Appendix A.1 idea).
 */
export class SequenceUnwrapper {
  private last = -1;
  private cycles = 0;
  constructor(private readonly bits: 16 | 32) {}
  unwrap(value: number): number {
    const span = this.bits === 16 ? 0x10000 : 0x100000000;
    if (this.last < 0) {
      this.last = value;
      return value;
    }
    const half = span / 2;
    const delta = value - this.last;
    let ext: number;
    if (delta < -half) {
      // Forward across the wrap.
      this.cycles += span;
      this.last = value;
      ext = this.cycles + value;
    } else if (delta > half) {
      // An old packet from before the wrap.
      ext = this.cycles - span + value;
    } else {
      if (delta > 0) this.last = value;
      ext = this.cycles + value;
    }
    return ext;
  }
  reset(): void {
    this.last = -1;
    this.cycles = 0;
  }
}
