// One RTP endpoint per call leg: G.711 in and out, a jitter buffer on the way in, 20 ms paced
// packets on the way out, RFC 4733 DTMF both ways, source validation (rtp/source-latch.ts) and a
// media timeout.
import { randomInt } from 'node:crypto';
import { isIPv4 } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SafeEmitter } from '../../events/index.js';
import { SourceLatch, type LatchingMode } from './source-latch.js';
import { parseRtpHeader, rtpHeader, writeRtpHeader, RTP_HEADER_BYTES } from './packet.js';
import { DtmfDecoder, digitPackets, type DigitDetected } from './dtmf.js';
import { bindNativeRtcpSocket, bindNativeRtpSocket, bindPooledRtpSocket, bindRtcpSocket, bindRtpSocket, type PortRange } from './port-allocator.js';
import type { MediaSocket } from './socket-protocol.js';
import { sharedRtpSocketPool } from './socket-pool.js';
import { nativeRtpIoFor, tryNativeRtpIoAddon } from './native-io.js';
import { looksLikeRtcp } from './rtcp.js';
import { RtcpSession } from './rtcp-session.js';
import { LegQuality, type CallQuality } from './call-quality.js';
import {
  FRAME_MS,
  FRAME_SAMPLES,
  JitterBuffer,
  LiveQueue,
  processMediaClock,
  frameEnergy,
  observeStage,
  PlayoutPhase,
  alawDecodeInto,
  alawEncodeInto,
  mulawDecodeInto,
  mulawEncodeInto,
  type JitterBufferOptions,
  FollowingPhase,
  type TickSource,
} from '../../media/index.js';

/** The clock RTP endpoints play out and send on: the process's one media clock, shared with the session pacers. */
export const rtpMediaClock = processMediaClock;

const SAMPLES = FRAME_SAMPLES;
// Outbound frames come from the session's pacer, already in real time. Sending runs in the clock's
// late phase, after the pacers, so a frame released in a tick leaves in that tick; the queue only
// absorbs a pacer on another clock (tests) or a burst: it converges to a one-frame backlog and never
// holds more than 300 ms (LiveQueue).
const OUT_QUEUE_TARGET = 1;
// The jitter buffer starts at, and may shrink back to, two frames (40 ms): the popped frame plus one
// frame of margin absorbs up to 20 ms of lateness on top of the arrival phase, and the adaptive target
// grows at once when measured jitter asks for more (1 + 3 × jitter / 20 ms frames) or on an underrun.
// The margin frame stands only while the frames' waits show it is needed (JitterBufferOptions.trimSlack,
// JITTER_TRIM_SLACK). Three frames as the floor put every leg's added latency at 40–60 ms before anything else ran.
const JITTER_START_FRAMES = 2;
const JITTER_MIN_FRAMES = 2;
// On a clock with sub-ticks a leg plays out just after its late arrivals (media/playout-phase.ts): that
// placement is the margin, so the buffer holds only the frame due, and grows on repeated underruns or
// on jitter beyond what the placement absorbs (JITTER_PLACED_ALLOWANCE_MS, three times the RFC 3550 estimate).
const PLACED_JITTER_FRAMES = 1;
const JITTER_PLACED_ALLOWANCE_MS = 15;
const OUT_QUEUE_MAX = 15;

/** Takes one decoded 20 ms frame per tick once the far end has started sending (ownership passes). */
export type FrameSink = (frame: Int16Array) => void;

export interface RtpEndpointEvents {
  dtmf: [DigitDetected];
  /** The source we latched to (first valid packet, or a later move to the signalled source). */
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
  /**
   * Which sources may send us media ("RTP source validation"): 'signalled' accepts only
   * the address:port of the peer's SDP; 'nat' (default) also latches to another source within the
   * first packets, of the same address family and, unless the SDP address is private, the same
   * address. Either way the signalled source wins when it shows up. Strays are counted and ignored.
   */
  latching?: LatchingMode;
  /** RTCP report interval (RFC 3550 §6.2 recommends 5 s minimum). Default 5000. */
  rtcpIntervalMs?: number;
  /**
   * RTP socket worker threads (MEDIA_WORKERS): with N > 0 the RTP socket lives in one of N worker threads
   * shared by the process (rtp/socket-pool.ts), which do the UDP system calls; 0 or absent: on this thread.
   */
  socketWorkers?: number;
  /**
   * MEDIA_IO=native|auto: the RTP socket is read once per media tick in a batch with every other leg's
   * (rtp/native-io.ts), and its packets leave with theirs after the tick. dgram when the bind address
   * is not IPv4 or the addon is unavailable (startup has loaded it, or failed, for MEDIA_IO=native).
   */
  nativeIo?: boolean;
  /**
   * MEDIA_IO_CONNECT: once the latch settles on the signalled source (nothing else can take it until a
   * new remote description), a batched socket is connected to it: the kernel drops every other source's
   * packets (not counted in `ignoredSource` then) and the leg's sends skip a route lookup each.
   */
  connectSettled?: boolean;
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
  /** RTCP shares the RTP port (RFC 5761), negotiated in SDP. */
  rtcpMux?: boolean;
}

export interface RtpEndpointStats {
  packetsIn: number;
  packetsOut: number;
  /** Packets from a source that is neither the latched nor an acceptable one (strays, hijack attempts). */
  ignoredSource: number;
  malformed: number;
  dtmfIn: number;
}

export class RtpEndpoint extends SafeEmitter<RtpEndpointEvents> {
  readonly port: number;
  readonly stats: RtpEndpointStats = { packetsIn: 0, packetsOut: 0, ignoredSource: 0, malformed: 0, dtmfIn: 0 };
  readonly jitter: JitterBuffer;
  private remote: RemoteMedia | null = null;
  private target: { address: string; port: number } | null = null;
  private readonly latch: SourceLatch;
  private readonly ssrc = randomInt(0, 0xffffffff);
  private seq = randomInt(0, 0xffff);
  private ts = randomInt(0, 0xffffffff);
  private marker = true;
  private lastSsrcIn = -1;
  private lastPacketAt = 0;
  private timedOut = false;
  private closed = false;
  private readonly outQueue: LiveQueue<Int16Array>;
  private dtmfQueue: { marker: boolean; payload: Uint8Array }[] = [];
  private dtmfTs = 0;
  private readonly dtmf = new DtmfDecoder();
  private decodeScratch = new Int16Array(SAMPLES);
  /** The last packet's header, parsed in place. */
  private readonly header = rtpHeader();
  private readonly asmBuf = new Int16Array(SAMPLES);
  private asmFill = 0;
  private asmTs = 0;
  private readonly silence = new Int16Array(SAMPLES);
  /**
   * The last frame sent, while the tick after it may conceal its absence: a frame that comes a tick late
   * (a socket client's, a pacer gap) left 20 ms of silence in the middle of speech, a dropout the caller
   * hears; one faded repeat bridges it, as the receive side's jitter buffer does for a lost packet. Kept by
   * reference (frames are not changed once played; others may hold this one, the recorder's tap say), and
   * faded into `faded` only on the tick that repeats it, not copied on every tick.
   */
  private lastSent: Int16Array | null = null;
  private readonly faded = new Int16Array(SAMPLES);
  private readonly unsubscribe: () => void;
  private readonly unsubscribeLate: () => void;
  /** The clock has a late phase: sending happens there (see OUT_QUEUE_TARGET). */
  private readonly lateSend: boolean;
  private readonly clock: TickSource;
  /** Where in the frame this leg plays out (clock with sub-ticks), from its packets' arrivals. */
  private readonly playout: PlayoutPhase | null;
  /** The sub-tick this leg sends in: that of the listener that queues its frames (a pacer's lane). */
  private readonly sendPhase = new FollowingPhase();
  private ticks = 0;
  /** Where decoded frames go: a plain call, not an event (one hop per leg and tick on the hottest path). */
  private frameSink: FrameSink | null = null;

  private readonly quality = new LegQuality();
  private readonly rtcp: RtcpSession;
  private octetsOut = 0;
  private readonly rtcpEveryTicks: number;
  /** Tick of the next RTCP report (see nextRtcpDue). */
  private nextRtcpTick: number;

  private constructor(
    private readonly socket: MediaSocket,
    private readonly rtcpSocket: MediaSocket | null,
    private readonly o: RtpEndpointOptions,
  ) {
    super();
    this.port = socket.address().port;
    this.rtcp = new RtcpSession(this.quality, `voxbridge-${this.ssrc.toString(16)}@${o.bindAddress}`, rtcpSocket, socket);
    this.rtcpEveryTicks = Math.max(1, Math.round((o.rtcpIntervalMs ?? 5000) / FRAME_MS));
    this.nextRtcpTick = this.nextRtcpDue();
    rtcpSocket?.on('message', (msg, rinfo) => this.receiveRtcp(msg, rinfo.address, rinfo.port, false, rinfo.arrivedAt ?? performance.now()));
    rtcpSocket?.on('error', () => {});

    const clock = (this.clock = o.clock ?? rtpMediaClock);
    this.playout = PlayoutPhase.on(clock);
    // With sub-ticks a leg sends in the sub-tick of the lane that feeds it, which may come after its own
    // send of that frame (its first frame, a move of the lane); it then sends again only a frame later,
    // never twice in a few ms, and a frame would stand in the queue for good: none is kept (the lane's
    // frames come in the sender's own sub-tick, so it needs no margin), a standing one goes within a second.
    this.outQueue = new LiveQueue<Int16Array>(frameEnergy, { targetFrames: this.playout ? 0 : OUT_QUEUE_TARGET, maxFrames: OUT_QUEUE_MAX });
    this.jitter = new JitterBuffer(
      this.playout
        ? { targetFrames: PLACED_JITTER_FRAMES, minFrames: PLACED_JITTER_FRAMES, jitterAllowanceMs: JITTER_PLACED_ALLOWANCE_MS, ...o.jitter }
        : { targetFrames: JITTER_START_FRAMES, minFrames: JITTER_MIN_FRAMES, ...o.jitter },
    );
    this.latch = new SourceLatch(o.latching ?? 'nat');
    // A batched socket's packet without the kernel's time (see native-io.ts) would place the leg at its own read.
    const readAtTicks = socket.readIn !== undefined;
    socket.on('message', (msg, rinfo) =>
      this.receive(msg, rinfo.address, rinfo.port, rinfo.arrivedAt ?? performance.now(), rinfo.arrivedAt !== undefined || !readAtTicks),
    );
    socket.on('error', () => {
      // ICMP unreachable and the like: RTP is best effort, the timeout notices a dead peer.
    });
    this.unsubscribe = clock.subscribe(() => this.tick(), this.playout?.tickPhase);
    if (this.playout) socket.readIn?.(this.playout.tickPhase);
    this.lateSend = typeof clock.subscribeLate === 'function';
    this.unsubscribeLate =
      clock.subscribeLate?.(() => {
        if (!this.closed) this.sendTick();
      }, this.sendPhase) ?? (() => {});
  }

  static async open(o: RtpEndpointOptions): Promise<RtpEndpoint> {
    const io = o.nativeIo && isIPv4(o.bindAddress) && tryNativeRtpIoAddon() ? nativeRtpIoFor(o.clock ?? rtpMediaClock) : null;
    if (io) {
      // RTCP batched too: its reports and the BYE at hang-up join the tick's sends instead of a system call each.
      const socket = await bindNativeRtpSocket(o, o.bindAddress, io);
      return new RtpEndpoint(socket, bindNativeRtcpSocket(socket.address().port, o.bindAddress, io), o);
    }
    const socket = o.socketWorkers ? await bindPooledRtpSocket(o, o.bindAddress, sharedRtpSocketPool(o.socketWorkers)) : await bindRtpSocket(o, o.bindAddress);
    return new RtpEndpoint(socket, await bindRtcpSocket(socket.address().port, o.bindAddress), o);
  }

  /** Applies (or re-applies, on re-INVITE) the negotiated remote media. */
  configure(remote: RemoteMedia): void {
    const moved = !this.remote || this.remote.address !== remote.address || this.remote.port !== remote.port;
    this.remote = remote;
    // A new remote description may legitimately move the stream: validate sources against it afresh.
    if (moved && remote.address !== '0.0.0.0') {
      this.socket.connectTo?.(null); // a connected socket (connectSettled) would keep dropping the new source
      this.latch.signal(remote.address, remote.port);
    }
    this.refreshTarget();
    this.lastPacketAt = performance.now();
    this.timedOut = false;
  }

  /** Where media goes: the latched source, else the signalled one (null while there is neither). */
  get remoteAddress(): { address: string; port: number } | null {
    return this.target;
  }

  /** Recomputes `target` (kept in a field: the send path reads it every tick of every leg). */
  private refreshTarget(): void {
    const latched = this.latch.latched;
    if (latched) this.target = latched;
    else if (!this.remote || this.remote.address === '0.0.0.0' || this.remote.port === 0) this.target = null;
    else this.target = { address: this.remote.address, port: this.remote.port };
  }

  /** Sends every decoded frame from now on to `sink` (null: played-out frames are dropped). */
  onFrames(sink: FrameSink | null): void {
    this.frameSink = sink;
  }

  /** Queues one 20 ms frame to send. */
  playFrame(frame: Int16Array): void {
    if (this.closed) return;
    // Queued by a listener of the clock (a pacer's lane): sent in its sub-tick from now on.
    const source = this.clock.runningPhase;
    if (source) this.sendPhase.follow(source);
    this.outQueue.push(frame, performance.now());
  }

  /** Drops queued outbound audio (barge-in): nothing of it is repeated either. */
  clearOutput(): void {
    this.outQueue.clear();
    this.lastSent = null;
  }

  sendDigit(digit: string, durationMs = 100): void {
    this.dtmfQueue.push(...digitPackets(digit, durationMs));
  }

  /** Packets, loss, jitter, round trip and MOS of this leg so far (RTP and RTCP). */
  get callQuality(): CallQuality {
    return this.quality.snapshot(this.stats.packetsOut, this.jitter.targetFrames * FRAME_MS);
  }

  close(): void {
    if (this.closed) return;
    const to = this.remoteAddress;
    this.closed = true;
    this.unsubscribe();
    this.unsubscribeLate();
    this.outQueue.clear();
    this.removeAllListeners();
    this.frameSink = null;
    const closeSockets = () => {
      for (const s of [this.rtcpSocket, this.socket]) {
        try {
          s?.close();
        } catch {
          // already closed
        }
      }
    };
    // RFC 3550 §6.6: say goodbye, then close once the BYE has left; §6.3.7: not if we never sent RTP or RTCP.
    const sentAny = this.stats.packetsOut > 0 || this.rtcp.sentAny;
    if (to && sentAny && this.remote?.send !== false) this.rtcp.sendBye(this.ssrc, to, this.remote?.rtcpMux === true, closeSockets);
    else closeSockets();
  }

  /** `placeable`: `arrivedAt` says when the packet came (it may place the leg's playout, see PlayoutPhase). */
  private receive(msg: Buffer, address: string, port: number, arrivedAt: number, placeable: boolean): void {
    if (this.closed) return;
    if (looksLikeRtcp(msg)) {
      this.receiveRtcp(msg, address, port, true, arrivedAt);
      return;
    }
    const p = this.header;
    if (!parseRtpHeader(msg, p)) {
      this.stats.malformed++;
      return;
    }
    const remote = this.remote;
    const isAudio = p.payloadType === 0 || p.payloadType === 8;
    const isDtmf = remote !== null && p.payloadType === remote.dtmfPayloadType;
    if (!isAudio && !isDtmf) return; // comfort noise, unknown codecs
    const verdict = this.latch.accept(address, port);
    if (verdict === 'ignore') {
      this.stats.ignoredSource++;
      return;
    }
    if (verdict === 'latched') {
      this.refreshTarget();
      if (this.o.connectSettled && this.latch.settled) this.socket.connectTo?.({ address, port });
      this.safeEmit('latched', { address, port });
    }
    this.stats.packetsIn++;
    this.lastPacketAt = arrivedAt;
    this.quality.onRtp(p.ssrc, p.sequence, p.timestamp, this.lastPacketAt);
    if (p.ssrc !== this.lastSsrcIn) {
      if (this.lastSsrcIn !== -1) this.jitter.reset();
      this.playout?.reset();
      this.asmFill = 0;
      this.lastSsrcIn = p.ssrc;
    }
    if (isDtmf) {
      const d = this.dtmf.push(p.timestamp, msg.subarray(p.payloadStart, p.payloadEnd));
      if (d) {
        this.stats.dtmfIn++;
        this.safeEmit('dtmf', d);
      }
      return;
    }
    if (placeable) this.playout?.note(p.timestamp, arrivedAt);
    const samples = p.payloadEnd - p.payloadStart;
    if (this.decodeScratch.length !== samples) this.decodeScratch = new Int16Array(samples);
    if (p.payloadType === 0) mulawDecodeInto(msg, this.decodeScratch, p.payloadStart, p.payloadEnd);
    else alawDecodeInto(msg, this.decodeScratch, p.payloadStart, p.payloadEnd);
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
    if (this.asmFill > 0 && ts !== (this.asmTs + this.asmFill) >>> 0) {
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
    // A batched socket is read at the start of its sub-tick; a packet that came since (a busy tick plays
    // hundreds of legs after it) would wait a frame and its frame be concealed: read it now instead.
    if (this.jitter.dueMissing) this.socket.readNow?.();
    const t0 = performance.now();
    const frame = this.jitter.pop(undefined, t0);
    if (frame) {
      if (!Number.isNaN(this.jitter.lastWaitMs)) observeStage('jitter_buffer', this.jitter.lastWaitMs);
      // One faulty consumer must not stop this leg's clock work: a throw is reported as a listener's.
      this.callSink(this.frameSink, frame, 'frame');
      // Everything downstream of a leg's frame (bridge, VAD, STT feed, pacer enqueue) runs synchronously.
      observeStage('pipeline', performance.now() - t0);
    }
    if (!this.lateSend) this.sendTick();
    if (++this.ticks % 25 === 0) this.checkTimeout();
    if (this.ticks >= this.nextRtcpTick) {
      this.nextRtcpTick = this.nextRtcpDue();
      this.sendRtcp();
    }
  }

  /**
   * RFC 3550 §6.3.1: each report interval is the nominal one times a random factor in [0.5, 1.5], so
   * legs that started together do not report together. With a fixed interval, 200 calls whose media
   * started in one tick sent their 400 reports in one tick every 5 s.
   */
  private nextRtcpDue(): number {
    return this.ticks + Math.max(1, Math.round(this.rtcpEveryTicks * (0.5 + Math.random())));
  }

  private sendRtcp(): void {
    const to = this.remoteAddress;
    if (!to || !this.remote) return;
    this.rtcp.sendReport(
      { ssrc: this.ssrc, packetsSent: this.stats.packetsOut, octetsSent: this.octetsOut, rtpTimestamp: this.ts },
      to,
      this.remote.rtcpMux === true,
    );
  }

  /** RTCP is taken only from the address media comes from (or is signalled from): strays are counted. */
  private receiveRtcp(msg: Buffer, address: string, port: number, viaMux: boolean, arrivedAt: number): void {
    if (this.closed) return;
    const expected = this.remoteAddress;
    if (!expected || expected.address !== address) {
      this.stats.ignoredSource++;
      return;
    }
    if (!this.rtcp.receive(msg, address, port, viaMux, this.ssrc, arrivedAt)) this.stats.malformed++;
  }

  private sendTick(): void {
    const remote = this.remote;
    const to = this.remoteAddress;
    const next = this.outQueue.shift();
    const queuedAt = this.outQueue.lastEnqueuedAt;
    this.outQueue.endTick();
    if (!remote || !to || !remote.send) return;
    if (this.dtmfQueue.length > 0 && remote.dtmfPayloadType !== null) {
      this.lastSent = null;
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
    const pcm = next && next.length === SAMPLES ? (this.lastSent = next) : this.concealOrSilence();
    const len = RTP_HEADER_BYTES + SAMPLES;
    // A batched socket lends a slot of its send batch: the header and the samples are written there,
    // and the addon encodes them as G.711 on its send thread, off the event loop.
    const at = this.socket.reservePcmSend?.(SAMPLES, remote.payloadType, to.port, to.address) ?? -1;
    const { sendBuffer, sendPcm } = this.socket;
    if (at >= 0 && sendBuffer && sendPcm) {
      this.writeAudioHeader(sendBuffer, at, remote.payloadType);
      sendPcm.set(pcm, (at + RTP_HEADER_BYTES) >> 1);
      this.countSent(len);
    } else {
      const buf = Buffer.allocUnsafe(len);
      this.writeAudioPacket(buf, 0, remote.payloadType, pcm);
      this.transmit(buf, to);
    }
    this.marker = false;
    if (next) observeStage('rtp_send', performance.now() - queuedAt);
    this.ts = (this.ts + SAMPLES) >>> 0;
  }

  /** The tick after a frame, with none queued: that frame once more at 70 % (the jitter buffer's first fade); then silence. */
  private concealOrSilence(): Int16Array {
    const last = this.lastSent;
    if (!last) return this.silence;
    this.lastSent = null;
    for (let i = 0; i < SAMPLES; i++) this.faded[i] = Math.round((last[i] ?? 0) * 0.7);
    return this.faded;
  }

  private writeAudioPacket(out: Uint8Array, at: number, payloadType: number, pcm: Int16Array): void {
    this.writeAudioHeader(out, at, payloadType);
    if (payloadType === 8) alawEncodeInto(pcm, out, at + RTP_HEADER_BYTES);
    else mulawEncodeInto(pcm, out, at + RTP_HEADER_BYTES);
  }

  private writeAudioHeader(out: Uint8Array, at: number, payloadType: number): void {
    writeRtpHeader(out, { marker: this.marker, payloadType, sequence: this.seq, timestamp: this.ts, ssrc: this.ssrc }, at);
  }

  /** Outbound frames waiting for their tick (converges to about one). */
  get outQueueDepth(): number {
    return this.outQueue.length;
  }

  /** Strays count (`stats.ignoredSource`); this tells which latching rule applies. */
  get latchingMode(): LatchingMode {
    return this.latch.mode;
  }

  private transmit(buf: Buffer, to: { address: string; port: number }): void {
    this.countSent(buf.length);
    this.socket.send(buf, to.port, to.address);
  }

  private countSent(packetBytes: number): void {
    this.seq = (this.seq + 1) & 0xffff;
    this.stats.packetsOut++;
    this.octetsOut += packetBytes - RTP_HEADER_BYTES;
  }

  private checkTimeout(): void {
    if (this.timedOut || !this.remote || !this.remote.expectReceive) {
      if (this.remote && !this.remote.expectReceive) this.lastPacketAt = performance.now();
      return;
    }
    if (performance.now() - this.lastPacketAt > this.o.timeoutMs) {
      this.timedOut = true;
      this.safeEmit('timeout');
    }
  }
}
