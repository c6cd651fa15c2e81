// HEP v3 (Homer Encapsulation Protocol, "HEP3"): a captured SIP message wrapped in typed chunks
// for a Homer/sipcapture collector. Written from the HEP3 specification: a 6-byte header ("HEP3",
// total length), then chunks of vendor id (0 = generic), type id and length (header included),
// all big-endian.
import dgram from 'node:dgram';
import net from 'node:net';

export const HEP_CHUNK = {
  ipFamily: 0x0001,
  ipProtocol: 0x0002,
  ipv4Src: 0x0003,
  ipv4Dst: 0x0004,
  ipv6Src: 0x0005,
  ipv6Dst: 0x0006,
  srcPort: 0x0007,
  dstPort: 0x0008,
  timeSeconds: 0x0009,
  timeMicros: 0x000a,
  protocolType: 0x000b,
  captureAgentId: 0x000c,
  payload: 0x000f,
  correlationId: 0x0011,
} as const;

const AF_INET = 2;
const AF_INET6 = 10;
const PROTO_SIP = 0x01;

export interface HepMessage {
  at: Date;
  transport: string;
  src: { address: string; port: number };
  dst: { address: string; port: number };
  payload: string;
  /** Call-ID, sent as the correlation id so the collector groups the call. */
  callId: string;
  agentId: number;
}

/** An address as HEP carries it: v4 (also v4-mapped v6) in 4 bytes, v6 in 16; non-IPs as 0.0.0.0. */
function addressBytes(address: string): { v6: boolean; bytes: Buffer } {
  const mapped = address.length > 7 && address.slice(0, 7).toLowerCase() === '::ffff:' ? address.slice(7) : null;
  const a = mapped && net.isIPv4(mapped) ? mapped : address;
  if (net.isIPv4(a)) return { v6: false, bytes: Buffer.from(a.split('.').map(Number)) };
  if (net.isIPv6(a)) return { v6: true, bytes: ipv6Bytes(a) };
  return { v6: false, bytes: Buffer.alloc(4) };
}

function ipv6Bytes(a: string): Buffer {
  const [head = '', tail = ''] = a.split('::');
  const words = (s: string): number[] => (s ? s.split(':').map((w) => parseInt(w, 16)) : []);
  const h = words(head);
  const t = a.includes('::') ? words(tail) : [];
  const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, i * 2));
  return out;
}

const V4_MAPPED_PREFIX = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
const as6 = (x: { v6: boolean; bytes: Buffer }): Buffer => (x.v6 ? x.bytes : Buffer.concat([V4_MAPPED_PREFIX, x.bytes]));

/** Encodes one captured message as a HEP3 packet: sized first, then written into one buffer. */
export function encodeHep(m: HepMessage): Buffer {
  const src = addressBytes(m.src.address);
  const dst = addressBytes(m.dst.address);
  // Both addresses must be of one family: a v4 side next to a v6 one is sent as v4-mapped v6.
  const v6 = src.v6 || dst.v6;
  const srcBytes = v6 ? as6(src) : src.bytes;
  const dstBytes = v6 ? as6(dst) : dst.bytes;
  const payloadLength = Buffer.byteLength(m.payload, 'utf8');
  const callIdLength = Buffer.byteLength(m.callId, 'utf8');
  const addrLength = srcBytes.length;
  // Chunks: family, protocol (1 byte each), src, dst addresses, ports (2), seconds, micros (4),
  // protocol type (1), agent id (4), payload, correlation id; each with a 6-byte chunk header.
  const total = 6 + 12 * 6 + 1 + 1 + 2 * addrLength + 2 + 2 + 4 + 4 + 1 + 4 + payloadLength + callIdLength;
  // HEP3 lengths are 16-bit: a larger message cannot be carried.
  if (total > 0xffff) throw new RangeError(`HEP3 packet of ${total} bytes exceeds 65535`);
  const out = Buffer.allocUnsafe(total);
  out.write('HEP3', 0, 'ascii');
  out.writeUInt16BE(total, 4);
  let off = 6;
  const head = (type: number, bodyLength: number): void => {
    out.writeUInt16BE(0x0000, off);
    out.writeUInt16BE(type, off + 2);
    out.writeUInt16BE(6 + bodyLength, off + 4);
    off += 6;
  };
  const ms = m.at.getTime();
  head(HEP_CHUNK.ipFamily, 1);
  off = out.writeUInt8(v6 ? AF_INET6 : AF_INET, off);
  head(HEP_CHUNK.ipProtocol, 1);
  off = out.writeUInt8(/tcp|tls/i.test(m.transport) ? 6 : 17, off);
  head(v6 ? HEP_CHUNK.ipv6Src : HEP_CHUNK.ipv4Src, addrLength);
  off += srcBytes.copy(out, off);
  head(v6 ? HEP_CHUNK.ipv6Dst : HEP_CHUNK.ipv4Dst, addrLength);
  off += dstBytes.copy(out, off);
  head(HEP_CHUNK.srcPort, 2);
  off = out.writeUInt16BE(m.src.port & 0xffff, off);
  head(HEP_CHUNK.dstPort, 2);
  off = out.writeUInt16BE(m.dst.port & 0xffff, off);
  head(HEP_CHUNK.timeSeconds, 4);
  off = out.writeUInt32BE(Math.floor(ms / 1000) >>> 0, off);
  head(HEP_CHUNK.timeMicros, 4);
  off = out.writeUInt32BE(((ms % 1000) * 1000) >>> 0, off);
  head(HEP_CHUNK.protocolType, 1);
  off = out.writeUInt8(PROTO_SIP, off);
  head(HEP_CHUNK.captureAgentId, 4);
  off = out.writeUInt32BE(m.agentId >>> 0, off);
  head(HEP_CHUNK.payload, payloadLength);
  off += out.write(m.payload, off, 'utf8');
  head(HEP_CHUNK.correlationId, callIdLength);
  out.write(m.callId, off, 'utf8');
  return out;
}

/** Chunks of a HEP3 packet by type (the reader side, for tests and tools). Throws on a bad packet. */
export function decodeHep(buf: Buffer): Map<number, Buffer> {
  if (buf.length < 6 || buf.toString('ascii', 0, 4) !== 'HEP3') throw new Error('not a HEP3 packet');
  const total = buf.readUInt16BE(4);
  if (total !== buf.length) throw new Error(`HEP3 length ${total} but packet has ${buf.length} bytes`);
  const out = new Map<number, Buffer>();
  let off = 6;
  while (off < total) {
    if (off + 6 > total) throw new Error('truncated HEP3 chunk header');
    const type = buf.readUInt16BE(off + 2);
    const len = buf.readUInt16BE(off + 4);
    if (len < 6 || off + len > total) throw new Error('bad HEP3 chunk length');
    out.set(type, buf.subarray(off + 6, off + len));
    off += len;
  }
  return out;
}

/** Fire-and-forget UDP sender to a collector; a failed send is counted, never thrown. */
export class HepSender {
  private readonly socket: dgram.Socket;
  sent = 0;
  failed = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {
    this.socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    this.socket.on('error', () => {
      this.failed++;
    });
    this.socket.unref();
  }

  /** `host:port` (IPv6 in brackets: [::1]:9060). */
  static fromAddress(address: string): HepSender {
    const m = /^\[?([^\]]+)\]?:(\d+)$/.exec(address);
    if (!m?.[1] || !m[2]) throw new Error(`bad HEP address ${address}`);
    return new HepSender(m[1], Number(m[2]));
  }

  send(m: HepMessage): void {
    // A UDP datagram holds at most 65,507 bytes of payload (HEP3 at most 65,535): a larger capture is skipped.
    const size = 100 + Buffer.byteLength(m.payload, 'utf8') + Buffer.byteLength(m.callId, 'utf8');
    const packet = size <= 65_507 ? encodeHep(m) : null;
    if (!packet || packet.length > 65_507) {
      this.failed++;
      return;
    }
    this.socket.send(packet, this.port, this.host, (err) => {
      if (err) this.failed++;
      else this.sent++;
    });
  }

  close(): void {
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }
}
