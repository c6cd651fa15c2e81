// RTCP packets (RFC 3550 §6): sender and receiver reports, SDES CNAME, BYE; a compound packet
// always starts with SR or RR and carries a CNAME (§6.1). Parsing reads SR/RR report blocks and
// ignores what it does not use (APP, XR, unknown types).

export const RTCP_SR = 200;
export const RTCP_RR = 201;
export const RTCP_SDES = 202;
export const RTCP_BYE = 203;

/** One reception report block (§6.4.1). */
export interface ReportBlock {
  ssrc: number;
  /** Fraction lost since the previous report, 0..255 (/256). */
  fractionLost: number;
  /** Cumulative packets lost (24-bit signed). */
  cumulativeLost: number;
  extendedHighestSeq: number;
  /** Interarrival jitter in timestamp units. */
  jitter: number;
  /** Middle 32 bits of the NTP timestamp of the last SR received from this source (0: none). */
  lastSr: number;
  /** Delay since that SR, in 1/65536 s. */
  delaySinceLastSr: number;
}

export interface SenderInfo {
  ntpSec: number;
  ntpFrac: number;
  rtpTimestamp: number;
  packetCount: number;
  octetCount: number;
}

export interface RtcpReport {
  type: 'sr' | 'rr';
  ssrc: number;
  sender: SenderInfo | null;
  blocks: ReportBlock[];
}

/** RFC 5761 §4: on a muxed port, RTCP is told from RTP by the second byte (packet type 192..223). */
export function looksLikeRtcp(buf: Uint8Array): boolean {
  return buf.length >= 8 && (buf[0] ?? 0) >> 6 === 2 && (buf[1] ?? 0) >= 192 && (buf[1] ?? 0) <= 223; // 8 bytes checked first
}

const NTP_UNIX_OFFSET = 2208988800;

/** Wall clock as NTP seconds and fraction (RFC 3550 §4). */
export function ntpNow(nowMs: number = Date.now()): { sec: number; frac: number } {
  const sec = Math.floor(nowMs / 1000);
  return { sec: (sec + NTP_UNIX_OFFSET) >>> 0, frac: Math.floor(((nowMs % 1000) / 1000) * 0x100000000) >>> 0 };
}

/** The middle 32 bits of an NTP timestamp, the unit of LSR (§6.4.1). */
export function ntpMiddle(sec: number, frac: number): number {
  return (((sec & 0xffff) << 16) | (frac >>> 16)) >>> 0;
}

function writeBlock(buf: Buffer, off: number, b: ReportBlock): number {
  buf.writeUInt32BE(b.ssrc >>> 0, off);
  const lost = Math.max(-0x800000, Math.min(0x7fffff, b.cumulativeLost)) & 0xffffff;
  buf.writeUInt32BE((((b.fractionLost & 0xff) << 24) | lost) >>> 0, off + 4);
  buf.writeUInt32BE(b.extendedHighestSeq >>> 0, off + 8);
  buf.writeUInt32BE(Math.max(0, Math.round(b.jitter)) >>> 0, off + 12);
  buf.writeUInt32BE(b.lastSr >>> 0, off + 16);
  buf.writeUInt32BE(b.delaySinceLastSr >>> 0, off + 20);
  return off + 24;
}

/** An SR (when `sender` is given) or RR with at most one report block, then SDES CNAME. */
export function buildReport(ssrc: number, sender: SenderInfo | null, block: ReportBlock | null, cname: string): Buffer {
  const rc = block ? 1 : 0;
  const reportLen = 8 + (sender ? 20 : 0) + rc * 24;
  const cnameBytes = Buffer.from(cname, 'utf8').subarray(0, 255);
  // SDES chunk: SSRC, CNAME item (type, length, text), end item, padded to 32 bits.
  const chunkLen = Math.ceil((4 + 2 + cnameBytes.length + 1) / 4) * 4;
  const sdesLen = 4 + chunkLen;
  const buf = Buffer.alloc(reportLen + sdesLen);
  buf[0] = 0x80 | rc;
  buf[1] = sender ? RTCP_SR : RTCP_RR;
  buf.writeUInt16BE(reportLen / 4 - 1, 2);
  buf.writeUInt32BE(ssrc >>> 0, 4);
  let off = 8;
  if (sender) {
    buf.writeUInt32BE(sender.ntpSec >>> 0, 8);
    buf.writeUInt32BE(sender.ntpFrac >>> 0, 12);
    buf.writeUInt32BE(sender.rtpTimestamp >>> 0, 16);
    buf.writeUInt32BE(sender.packetCount >>> 0, 20);
    buf.writeUInt32BE(sender.octetCount >>> 0, 24);
    off = 28;
  }
  if (block) off = writeBlock(buf, off, block);
  buf[off] = 0x81;
  buf[off + 1] = RTCP_SDES;
  buf.writeUInt16BE(sdesLen / 4 - 1, off + 2);
  buf.writeUInt32BE(ssrc >>> 0, off + 4);
  buf[off + 8] = 1; // CNAME
  buf[off + 9] = cnameBytes.length;
  cnameBytes.copy(buf, off + 10);
  return buf;
}

/** A BYE for `ssrc` (sent when the leg closes, §6.6). */
export function buildBye(ssrc: number): Buffer {
  const buf = Buffer.alloc(8);
  buf[0] = 0x81;
  buf[1] = RTCP_BYE;
  buf.writeUInt16BE(1, 2);
  buf.writeUInt32BE(ssrc >>> 0, 4);
  return buf;
}

/** Reads the SR/RR packets of a compound RTCP packet; null if it is not valid RTCP (§A.2 checks). */
export function parseRtcp(buf: Uint8Array): { reports: RtcpReport[]; bye: boolean } | null {
  if (!looksLikeRtcp(buf)) return null;
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const reports: RtcpReport[] = [];
  let bye = false;
  let off = 0;
  while (off + 4 <= view.length) {
    const b0 = view.readUInt8(off);
    if (b0 >> 6 !== 2) return null;
    const count = b0 & 0x1f;
    const type = view[off + 1];
    const len = (view.readUInt16BE(off + 2) + 1) * 4;
    if (off + len > view.length) return null;
    if ((type === RTCP_SR || type === RTCP_RR) && len >= 8) {
      const ssrc = view.readUInt32BE(off + 4);
      let p = off + 8;
      let sender: SenderInfo | null = null;
      if (type === RTCP_SR) {
        if (len < 28) return null;
        sender = {
          ntpSec: view.readUInt32BE(p),
          ntpFrac: view.readUInt32BE(p + 4),
          rtpTimestamp: view.readUInt32BE(p + 8),
          packetCount: view.readUInt32BE(p + 12),
          octetCount: view.readUInt32BE(p + 16),
        };
        p += 20;
      }
      const blocks: ReportBlock[] = [];
      for (let i = 0; i < count && p + 24 <= off + len; i++, p += 24) {
        const word = view.readUInt32BE(p + 4);
        const lost24 = word & 0xffffff;
        blocks.push({
          ssrc: view.readUInt32BE(p),
          fractionLost: word >>> 24,
          cumulativeLost: lost24 & 0x800000 ? lost24 - 0x1000000 : lost24,
          extendedHighestSeq: view.readUInt32BE(p + 8),
          jitter: view.readUInt32BE(p + 12),
          lastSr: view.readUInt32BE(p + 16),
          delaySinceLastSr: view.readUInt32BE(p + 20),
        });
      }
      reports.push({ type: type === RTCP_SR ? 'sr' : 'rr', ssrc, sender, blocks });
    } else if (type === RTCP_BYE) {
      bye = true;
    }
    off += len;
  }
  return off === view.length ? { reports, bye } : null;
}
