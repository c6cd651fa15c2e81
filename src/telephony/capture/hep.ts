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

function chunk(type: number, body: Buffer): Buffer {
  const head = Buffer.alloc(6);
  head.writeUInt16BE(0x0000, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt16BE(6 + body.length, 4);
  return Buffer.concat([head, body]);
}

const u8 = (v: number): Buffer => Buffer.from([v & 0xff]);
function u16(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(v & 0xffff);
  return b;
}
function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b;
}

/** An address as HEP carries it: v4 (also v4-mapped v6) in 4 bytes, v6 in 16; non-IPs as 0.0.0.0. */
function addressBytes(address: string): { v6: boolean; bytes: Buffer } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const a = mapped ?? address;
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

/** Encodes one captured message as a HEP3 packet. */
export function encodeHep(m: HepMessage): Buffer {
  const src = addressBytes(m.src.address);
  let dst = addressBytes(m.dst.address);
  // Both addresses must be of one family: a v4 side next to a v6 one is sent as v4-mapped v6.
  const v6 = src.v6 || dst.v6;
  const as6 = (x: { v6: boolean; bytes: Buffer }): Buffer => (x.v6 ? x.bytes : Buffer.concat([Buffer.alloc(10), Buffer.from([0xff, 0xff]), x.bytes]));
  const srcBytes = v6 ? as6(src) : src.bytes;
  dst = { v6, bytes: v6 ? as6(dst) : dst.bytes };
  const ms = m.at.getTime();
  const chunks = [
    chunk(HEP_CHUNK.ipFamily, u8(v6 ? AF_INET6 : AF_INET)),
    chunk(HEP_CHUNK.ipProtocol, u8(/tcp|tls/i.test(m.transport) ? 6 : 17)),
    chunk(v6 ? HEP_CHUNK.ipv6Src : HEP_CHUNK.ipv4Src, srcBytes),
    chunk(v6 ? HEP_CHUNK.ipv6Dst : HEP_CHUNK.ipv4Dst, dst.bytes),
    chunk(HEP_CHUNK.srcPort, u16(m.src.port)),
    chunk(HEP_CHUNK.dstPort, u16(m.dst.port)),
    chunk(HEP_CHUNK.timeSeconds, u32(Math.floor(ms / 1000))),
    chunk(HEP_CHUNK.timeMicros, u32((ms % 1000) * 1000)),
    chunk(HEP_CHUNK.protocolType, u8(PROTO_SIP)),
    chunk(HEP_CHUNK.captureAgentId, u32(m.agentId)),
    chunk(HEP_CHUNK.payload, Buffer.from(m.payload, 'utf8')),
    chunk(HEP_CHUNK.correlationId, Buffer.from(m.callId, 'utf8')),
  ];
  const body = Buffer.concat(chunks);
  const head = Buffer.alloc(6);
  head.write('HEP3', 0, 'ascii');
  head.writeUInt16BE(6 + body.length, 4);
  return Buffer.concat([head, body]);
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
    const packet = encodeHep(m);
    // A UDP datagram holds at most 65,507 bytes of payload; a larger capture is skipped.
    if (packet.length > 65_507) {
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
