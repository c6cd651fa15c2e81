// One RTP endpoint per call leg: G.711 in and out, a jitter buffer on the way in, 20 ms paced
// packets on the way out, RFC 4733 DTMF both ways, symmetric RTP latching and a media timeout.
import type dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import { randomInt } from 'node:crypto';
import { parseRtp, writeRtpHeader, RTP_HEADER_BYTES } from './packet.js';
import { DtmfDecoder, digitPackets, type DigitDetected } from './dtmf.js';
import { bindRtpSocket, type PortRange } from './port-allocator.js';
import {
  FRAME_MS, FRAME_SAMPLES, JitterBuffer, MediaClock, alawDecodeInto, alawEncodeInto, mulawDecodeInto, mulawEncodeInto,
  type JitterBufferOptions, type TickSource,
} from '../../media/index.js';

/**
 * The process-wide clock RTP endpoints send on. Kept apart from the sessions' pacing clock, with a
 * shorter catch-up (10 ticks): under load bench/sip measured fewer ticks than wall time with one clock for both.
 */
export const rtpMediaClock = new MediaClock(FRAME_MS, 10);

const SAMPLES = FRAME_SAMPLES;
const OUT_QUEUE_MAX = 250; // 5 s of audio; the pipeline paces in real time, this only absorbs bursts

export interface RtpEndpointEvents {
  /** One decoded 20 ms frame per tick once the far end has started sending (ownership passes). */
  frame: [Int16Array];
  dtmf: [DigitDetected];
  /** First valid packet: the source we latched to. */
  latched: [{ address: string; port: number }];
  /** No RTP for the configured time while the far end should be sending. */
  timeout: [];
}

export interface RtpEndpointOptions extends PortRange {
  bindAddress: string;
  timeoutMs: number;
  /** Tick source for playout and pacing; share the pipeline's so RTP and pacers tick together. */
  clock?: TickSource;
  jitter?: JitterBufferOptions;
}

export interface RemoteMedia {
  address: string;
  port: number;
  /** Codec we send (and expect): PCMU 0 or PCMA 8. */
  payloadType: number;
  dtmfPayloadType: number | null;
  /** We send audio: false while the peer does not listen (it offered sendonly or inactive). */
  send: boolean;
  /** The peer is expected to send (drives the RTP timeout). */
  expectReceive: boolean;
}

export interface RtpEndpointStats {
  packetsIn: number;
  packetsOut: number;
  ignoredSource: number;
  malformed: number;
  dtmfIn: number;
}

export class RtpEndpoint extends EventEmitter<RtpEndpointEvents> {
  readonly port: number;
  readonly stats: RtpEndpointStats = { packetsIn: 0, packetsOut: 0, ignoredSource: 0, malformed: 0, dtmfIn: 0 };
  readonly jitter: JitterBuffer;
  private remote: RemoteMedia | null = null;
  private latchedAddress: string | null = null;
  private latchedPort = 0;
  private readonly ssrc = randomInt(0, 0xffffffff);
  private seq = randomInt(0, 0xffff);
  private ts = randomInt(0, 0xffffffff);
  private marker = true;
  private lastSsrcIn = -1;
  private lastPacketAt = 0;
  private timedOut = false;
  private closed = false;
  private readonly outQueue: Int16Array[] = [];
  private dtmfQueue: { marker: boolean; payload: Uint8Array }[] = [];
  private dtmfTs = 0;
  private readonly dtmf = new DtmfDecoder();
  private decodeScratch = new Int16Array(SAMPLES);
  private readonly asmBuf = new Int16Array(SAMPLES);
  private asmFill = 0;
  private asmTs = 0;
  private readonly silence = new Int16Array(SAMPLES);
  private readonly unsubscribe: () => void;
  private ticks = 0;

  private constructor(private readonly socket: dgram.Socket, private readonly o: RtpEndpointOptions) {
    super();
    this.port = socket.address().port;

    this.jitter = new JitterBuffer(o.jitter);
    socket.on('message', (msg, rinfo) => this.receive(msg, rinfo.address, rinfo.port));
    socket.on('error', () => {
      // ICMP unreachable and the like: RTP is best effort, the timeout notices a dead peer.
    });
    this.unsubscribe = (o.clock ?? rtpMediaClock).subscribe(() => this.tick());
  }

  static async open(o: RtpEndpointOptions): Promise<RtpEndpoint> {
    const socket = await bindRtpSocket(o, o.bindAddress);
    return new RtpEndpoint(socket, o);
  }

  /** Applies (or re-applies, on re-INVITE) the negotiated remote media. */
  configure(remote: RemoteMedia): void {
    const moved = !this.remote || this.remote.address !== remote.address || this.remote.port !== remote.port;
    this.remote = remote;
    if (moved && remote.address !== '0.0.0.0') {
      // A new remote description may legitimately move the stream: latch again.
      this.latchedAddress = null;
    }
    this.lastPacketAt = performance.now();
    this.timedOut = false;
  }

  get remoteAddress(): { address: string; port: number } | null {
    if (this.latchedAddress) return { address: this.latchedAddress, port: this.latchedPort };
    if (!this.remote || this.remote.address === '0.0.0.0' || this.remote.port === 0) return null;
    return { address: this.remote.address, port: this.remote.port };
  }

  /** Queues one 20 ms frame to send. */
  playFrame(frame: Int16Array): void {
    if (this.closed) return;
    if (this.outQueue.length >= OUT_QUEUE_MAX) this.outQueue.shift();
    this.outQueue.push(frame);
  }

  /** Drops queued outbound audio (barge-in). */
  clearOutput(): void {
    this.outQueue.length = 0;
  }

  sendDigit(digit: string, durationMs = 100): void {
    this.dtmfQueue.push(...digitPackets(digit, durationMs));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.outQueue.length = 0;
    try {
      this.socket.close();
    } catch {
      // already closed
    }
    this.removeAllListeners();
  }

  private receive(msg: Buffer, address: string, port: number): void {
    if (this.closed) return;
    const p = parseRtp(msg);
    if (!p) {
      this.stats.malformed++;
      return;
    }
    const remote = this.remote;
    const isAudio = p.payloadType === 0 || p.payloadType === 8;
    const isDtmf = remote !== null && p.payloadType === remote.dtmfPayloadType;
    if (!isAudio && !isDtmf) return; // comfort noise, unknown codecs
    if (this.latchedAddress === null) {
      this.latchedAddress = address;
      this.latchedPort = port;
      this.emit('latched', { address, port });
    } else if (address !== this.latchedAddress || port !== this.latchedPort) {
      this.stats.ignoredSource++;
      return;
    }
    this.stats.packetsIn++;
    this.lastPacketAt = performance.now();
    if (p.ssrc !== this.lastSsrcIn) {
      if (this.lastSsrcIn !== -1) this.jitter.reset();
      this.asmFill = 0;
      this.lastSsrcIn = p.ssrc;
    }
    if (isDtmf) {
      const d = this.dtmf.push(p.timestamp, p.payload);
      if (d) {
        this.stats.dtmfIn++;
        this.emit('dtmf', d);
      }
      return;
    }
    if (this.decodeScratch.length !== p.payload.length) this.decodeScratch = new Int16Array(p.payload.length);
    if (p.payloadType === 0) mulawDecodeInto(p.payload, this.decodeScratch);
    else alawDecodeInto(p.payload, this.decodeScratch);
    this.assemble(p.timestamp, this.decodeScratch);
  }

  /**
   * Packets of whole 20 ms frames go straight to the jitter buffer; other packetizations
   * (ptime 10, 30) are reassembled into 20 ms frames along the timestamp line first.
   */
  private assemble(ts: number, samples: Int16Array): void {
    if (this.asmFill === 0 && samples.length % SAMPLES === 0) {
      this.jitter.push(ts, samples, this.lastPacketAt);
      return;
    }
    if (this.asmFill > 0 && ts !== ((this.asmTs + this.asmFill) >>> 0)) {
      // A gap or reordering inside a frame: emit what we have (the rest silent) and start over.
      this.asmBuf.fill(0, this.asmFill);
      this.jitter.push(this.asmTs, this.asmBuf, this.lastPacketAt);
      this.asmFill = 0;
    }
    if (this.asmFill === 0) this.asmTs = ts;
    let off = 0;
    while (off < samples.length) {
      const take = Math.min(SAMPLES - this.asmFill, samples.length - off);
      this.asmBuf.set(samples.subarray(off, off + take), this.asmFill);
      this.asmFill += take;
      off += take;
      if (this.asmFill === SAMPLES) {
        this.jitter.push(this.asmTs, this.asmBuf, this.lastPacketAt);
        this.asmTs = (this.asmTs + SAMPLES) >>> 0;
        this.asmFill = 0;
      }
    }
  }

  private tick(): void {
    if (this.closed) return;
    const frame = this.jitter.pop();
    if (frame) this.emit('frame', frame);
    this.sendTick();
    if (++this.ticks % 25 === 0) this.checkTimeout();
  }

  private sendTick(): void {
    const remote = this.remote;
    const to = this.remoteAddress;
    const next = this.outQueue.shift();
    if (!remote || !to || !remote.send) return;
    if (this.dtmfQueue.length > 0 && remote.dtmfPayloadType !== null) {
      const d = this.dtmfQueue.shift()!;
      if (d.marker) this.dtmfTs = this.ts;
      const buf = Buffer.allocUnsafe(RTP_HEADER_BYTES + 4);
      writeRtpHeader(buf, { marker: d.marker, payloadType: remote.dtmfPayloadType, sequence: this.seq, timestamp: this.dtmfTs, ssrc: this.ssrc });
      buf.set(d.payload, RTP_HEADER_BYTES);
      this.transmit(buf, to);
      this.ts = (this.ts + SAMPLES) >>> 0;
      this.marker = true;
      return;
    }
    const pcm = next && next.length === SAMPLES ? next : this.silence;
    const buf = Buffer.allocUnsafe(RTP_HEADER_BYTES + SAMPLES);
    writeRtpHeader(buf, { marker: this.marker, payloadType: remote.payloadType, sequence: this.seq, timestamp: this.ts, ssrc: this.ssrc });
    const body = buf.subarray(RTP_HEADER_BYTES);
    if (remote.payloadType === 8) alawEncodeInto(pcm, body);
    else mulawEncodeInto(pcm, body);
    this.marker = false;
    this.transmit(buf, to);
    this.ts = (this.ts + SAMPLES) >>> 0;
  }

  private transmit(buf: Buffer, to: { address: string; port: number }): void {
    this.seq = (this.seq + 1) & 0xffff;
    this.stats.packetsOut++;
    this.socket.send(buf, to.port, to.address);
  }

  private checkTimeout(): void {
    if (this.timedOut || !this.remote || !this.remote.expectReceive) {
      if (this.remote && !this.remote.expectReceive) this.lastPacketAt = performance.now();
      return;
    }
    if (performance.now() - this.lastPacketAt > this.o.timeoutMs) {
      this.timedOut = true;
      this.emit('timeout');
    }
  }
}
