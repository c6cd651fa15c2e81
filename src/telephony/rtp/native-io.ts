// MEDIA_IO=native: RTP sockets read once per media-clock tick and written once per tick, through the
// addon built from native/rtp-io.c. dgram pays, per datagram, a libuv callback with two recvmsg
// calls, a Buffer, an rinfo object and a send wrap — over a third of the gateway's CPU in the
// twelfth-pass profile. Here each tick reads every socket into one shared buffer, and each packet
// keeps the kernel's arrival time (SO_TIMESTAMPNS), so the jitter estimate and the jitter buffer see
// when it arrived, not when the tick read it. The read runs in the clock's early phase, before the
// legs play out: a packet waits no longer than with dgram. Sends are copied into one buffer and leave
// together after the tick's callbacks (a microtask), or at the start of the next tick when the clock
// runs several back to back; those queued outside a tick (a hang-up's RTCP BYE) leave at the end of
// the loop turn. Where the addon was built with liburing, the
// tick's reads and its sends each go to the kernel in one io_uring submission: on a VM where every
// system call costs a hypervisor round trip, one call per socket was the largest item left. The sends
// then leave from the addon's own thread (MEDIA_IO_SEND_THREAD): on loopback a send also runs the
// receiver's delivery and costs twice a read, so the main loop hands a tick's batch over and goes on.
// IPv4 only.
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { constants } from 'node:os';
import type { TickPhase, TickSource } from '../../media/index.js';
import { RTP_HEADER_BYTES } from './packet.js';
import { loadRtpIoAddon, monotonicToPerformance, type ReceiveThread, type RtpIoAddon } from './rtp-io-addon.js';
import type { MediaSocket, PacketInfo } from './socket-protocol.js';

export { loadRtpIoAddon, RTP_IO_ADDON, RTP_RECV_THREAD_NAME, RTP_SEND_THREAD_NAME, type ReceiveThread, type RtpIoAddon } from './rtp-io-addon.js';

/** Bytes per packet slot and int32 per packet of metadata: as SLOT and META in native/packet-io.h. */
const SLOT = 2048;
const META = 4;
/** A send's length word asks for its PCM16 payload to be encoded (native/g711.h): the encoding above bit 16. */
const ENCODE_SHIFT = 16;
const ENCODE_NONE = 0;
const ENCODE_ALAW = 1;
const ENCODE_MULAW = 2;
/** Packets read per drain call (4 MB of slots); a fuller tick takes more calls. */
const BATCH = 2048;
/**
 * A socket bound `{ cold: true }` (RTCP on port + 1: a report every few seconds) is read every this many
 * ticks (100 ms), not every tick. Half of a call's sockets are RTCP's, idle nearly always, and reading an
 * idle socket costs ~0.1 µs per tick through io_uring and ~0.65 µs with recvmmsg per socket (io_uring
 * unavailable): 0.4 % and 2.6 % of a core at 400 calls (`bench/media/idle-poll-cost.ts`), a fifth of it
 * now. Its packets keep their kernel arrival times, so the round trip taken from them loses nothing.
 */
export const COLD_READ_TICKS = 5;
const { EADDRINUSE } = constants.errno;

/** Host-order uint32 of an IPv4 literal, or null. */
export function ipv4ToUint(address: string): number | null {
  if (!net.isIPv4(address)) return null;
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function uintToIpv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

type MessageListener = (msg: Buffer, info: PacketInfo) => void;

/** A socket the group reads; looks like the part of dgram.Socket the endpoint uses. */
export class NativeSocket extends EventEmitter implements MediaSocket {
  closed = false;
  /** The 'message' listener, called directly per packet rather than through emit (one reader: its endpoint). */
  receiver: MessageListener | null = null;
  // The last destination's number: an endpoint sends to one address for a whole call.
  private lastTo = '';
  private lastToNum = 0;
  /** The peer the socket is connected to (connectTo), or null. */
  private peer: { address: string; port: number } | null = null;
  /** The sub-tick it is read in (readIn); null: the frame's first. */
  readPhase: TickPhase | null = null;

  constructor(
    private readonly io: NativeRtpIo,
    readonly fd: number,
    private readonly port: number,
    /** Read every COLD_READ_TICKS ticks rather than every tick. */
    readonly cold: boolean,
  ) {
    super();
  }

  send(msg: Uint8Array, port: number, address: string, callback?: (err: Error | null) => void): void {
    const to = this.closed ? null : this.destinationOf(address);
    if (to !== null) this.io.queueSend(this.fd, msg, this.portOrPeer(port, address), to, callback);
    else this.io.refuseSend(new Error(this.closed ? 'socket closed' : `MEDIA_IO=native sends to IPv4 literals only, not ${address}`), callback);
  }

  get sendBuffer(): Uint8Array {
    return this.io.sendData;
  }

  get sendPcm(): Int16Array {
    return this.io.sendPcm;
  }

  reservePcmSend(samples: number, payloadType: number, port: number, address: string): number {
    const encode = payloadType === 8 ? ENCODE_ALAW : payloadType === 0 ? ENCODE_MULAW : ENCODE_NONE;
    const len = RTP_HEADER_BYTES + 2 * samples;
    const to = this.closed || encode === ENCODE_NONE || len > SLOT ? null : this.destinationOf(address);
    return to === null ? -1 : this.io.reserveSend(this.fd, len, this.portOrPeer(port, address), to, encode);
  }

  /**
   * Connects the socket to one peer (connect(2)), or with null to none again. The kernel then drops
   * datagrams from any other source before they cost a read, and sends to the peer take the route it
   * keeps for the socket instead of looking one up per datagram: 4–11 % of a packet's cost received and
   * sent back (BENCHMARKS.md, twenty-sixth pass). False when the kernel refused (the socket stays as it was);
   * null on an unconnected socket is true at once.
   * A packet already queued for the old peer when the association is dissolved (a re-INVITE moving the
   * stream, in the same tick) then fails, counted as a send error: that peer is being left anyway.
   */
  connectTo(peer: { address: string; port: number } | null): boolean {
    if (this.closed) return false;
    if (peer === null && this.peer === null) return true; // nothing to dissolve: no system call
    const address = peer === null ? 0 : ipv4ToUint(peer.address);
    if (address === null || (peer !== null && (peer.port <= 0 || peer.port > 65535))) return false;
    if (this.io.addon.connect(this.fd, address, peer?.port ?? 0) < 0) return false;
    this.peer = peer && { address: peer.address, port: peer.port };
    return true;
  }

  /** 0 for a send to the connected peer: the addon sends it without a destination (see connectTo). */
  private portOrPeer(port: number, address: string): number {
    const peer = this.peer;
    return peer !== null && peer.port === port && peer.address === address ? 0 : port;
  }

  /** The number of an IPv4 literal (the last one kept: a leg sends to one address for a whole call), or null. */
  private destinationOf(address: string): number | null {
    if (address !== this.lastTo) {
      const n = ipv4ToUint(address);
      if (n === null) return null;
      this.lastTo = address;
      this.lastToNum = n;
    }
    return this.lastToNum;
  }

  override on(event: string | symbol, listener: Parameters<EventEmitter['on']>[1]): this {
    if (event !== 'message') return super.on(event, listener);
    if (this.receiver) throw new Error('a batched RTP socket has one message listener');
    this.receiver = listener;
    this.io.listened();
    return this;
  }

  address(): { port: number } {
    return { port: this.port };
  }

  readIn(phase: TickPhase): void {
    this.readPhase = phase;
  }

  readNow(): boolean {
    return !this.closed && this.io.readNow(this);
  }

  /** Stops reading and sending now; the fd closes (and 'close' is emitted, releasing the port) once its queued packets have left. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.io.remove(this);
  }
}

/** Sockets read in one drain call, and their fds in the same order (a packet names its socket by index). */
interface ReadSet {
  sockets: NativeSocket[];
  fds: Int32Array;
}
const NO_SOCKETS: ReadSet = { sockets: [], fds: new Int32Array(0) };
const readSet = (sockets: NativeSocket[]): ReadSet => ({ sockets, fds: Int32Array.from(sockets, (s) => s.fd) });

/** The batched RTP sockets of the endpoints on one clock, read in that clock's early phase. */
export class NativeRtpIo {
  /** The sockets read: closed ones leave it at the next drain (one filter per tick, not one per close). */
  private sockets: NativeSocket[] = [];
  private live = 0;
  /** `sockets` split by how often they are read, with their fds, remade when a socket came or went. */
  private hotSet = NO_SOCKETS;
  private coldSet = NO_SOCKETS;
  /** The hot sockets read in the current sub-tick (clock with sub-ticks), remade each one. */
  private readonly phaseSet: ReadSet = { sockets: [], fds: new Int32Array(64) };
  /** The one socket a readNow reads. */
  private readonly oneSet: ReadSet = { sockets: [], fds: new Int32Array(1) };
  private ticks = 0;
  private dirty = false;
  private draining = false;
  /** Closed sockets whose fds close after the next send flush, outside a drain (see closeSockets). */
  private closing: NativeSocket[] = [];
  private readonly out = Buffer.alloc(SLOT * BATCH);
  private readonly meta = new Int32Array(META * BATCH);
  private readonly arrivals = new Float64Array(BATCH);
  private readonly addresses = new Map<number, string>();
  /** With a receive thread (started at the first bind, stopped when the last socket goes): the sockets by fd, as its packets name them. */
  private receiveThread: ReceiveThread | null = null;
  private readonly byFd: (NativeSocket | undefined)[] = [];
  // Packets queued for the next sendBatch: slots as in `out`, meta fd, length, port, address.
  readonly sendData = Buffer.alloc(SLOT * BATCH);
  /** sendData as samples, for payloads the addon encodes (slots and the 12-byte header keep them 2-aligned). */
  readonly sendPcm = new Int16Array(this.sendData.buffer, this.sendData.byteOffset, this.sendData.length / 2);
  private readonly sendMeta = new Int32Array(META * BATCH);
  private sendCount = 0;
  /** The queued packets' earliest departure on CLOCK_MONOTONIC, in ms (0: at once); see sendNotBefore. */
  private sendNotBeforeMs = 0;
  private sendCallbacks: { k: number; callback: (err: Error | null) => void }[] = [];
  private flushQueued = false;
  private closeRetry: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  constructor(
    readonly addon: RtpIoAddon,
    private readonly clock: TickSource,
    /** Health figures: packets read, read passes over the sockets (drain calls), single sockets read outside their turn, truncated packets, packets sent, failed sends. */
    readonly counts: NativeIoCounts = { packets: 0, reads: 0, readsNow: 0, truncated: 0, sent: 0, sendErrors: 0 },
    /** Read and send through io_uring where the addon has it (MEDIA_IO_URING); false: recvmmsg per socket, sendto per packet. */
    private readonly ioUring = true,
    /** Send from the addon's send thread (MEDIA_IO_SEND_THREAD); false: on this thread, waiting for the kernel. */
    private readonly sendThread = true,
    /** Read on the addon's receive thread (MEDIA_IO_RECV_THREAD), the tick taking what it read; false: this thread reads at the tick. */
    private readonly recvThread = false,
  ) {}

  /** Packets the receive thread has read and the next tick will take (0 without one). */
  get receivedPending(): number {
    return this.receiveThread ? Math.max(0, this.addon.recvPending(this.receiveThread)) : 0;
  }

  get socketCount(): number {
    return this.live;
  }

  /** A socket got its 'message' listener: the read sets take it in at the next tick. */
  listened(): void {
    if (!this.recvThread) this.dirty = true;
  }

  /** A socket bound to address:port; null when the port is taken (the allocator tries another). */
  bind(address: string, port: number, o: { cold?: boolean } = {}): NativeSocket | null {
    const a = ipv4ToUint(address);
    if (a === null) throw new Error(`MEDIA_IO=native binds IPv4 addresses only, not ${address}`);
    const fd = this.addon.open(a, port);
    if (fd === -EADDRINUSE) return null;
    if (fd < 0) throw new Error(`cannot bind RTP socket ${address}:${port} (errno ${-fd})`);
    if (this.recvThread) this.watch(fd, `${address}:${port}`);
    const socket = new NativeSocket(this, fd, this.addon.port(fd), o.cold === true);
    // The receive thread reads every socket it watches and names them by fd; the tick reads the read sets otherwise.
    if (this.recvThread) {
      this.byFd[fd] = socket;
    } else {
      this.sockets.push(socket);
      this.dirty = true;
    }
    this.live++;
    this.unsubscribe ??= (this.clock.subscribeEarly ?? this.clock.subscribe).call(this.clock, this.drainAll);
    return socket;
  }

  /** Has the receive thread read fd (started now if it is not running); closes fd and throws when it cannot. */
  private watch(fd: number, where: string): void {
    this.receiveThread ??= this.addon.recvStart();
    const watched = this.receiveThread ? this.addon.recvWatch(this.receiveThread, fd) : -1;
    if (watched < 0) {
      this.addon.close(fd);
      throw new Error(
        `MEDIA_IO_RECV_THREAD: no receive thread reads RTP socket ${where} (${this.receiveThread ? `errno ${-watched}` : 'the thread did not start'})`,
      );
    }
  }

  /** Queues a packet for the next batch (see queueFlush), or sends the batch at once when full. */
  queueSend(fd: number, msg: Uint8Array, port: number, address: number, callback?: (err: Error | null) => void): void {
    if (msg.length > SLOT) {
      this.refuseSend(new Error(`packet of ${msg.length} bytes is over ${SLOT}`), callback);
      return;
    }
    const at = this.reserveSend(fd, msg.length, port, address);
    this.sendData.set(msg, at);
    if (callback) this.sendCallbacks.push({ k: at / SLOT, callback });
  }

  /**
   * A slot of the batch for a `len`-byte packet (len ≤ SLOT), to be filled by the caller now; its byte
   * offset in sendData. `encode` (ENCODE_ALAW, ENCODE_MULAW): the payload after the 12-byte header is
   * PCM16 for the addon to encode, and the packet leaves 12 + (len - 12) / 2 bytes long.
   */
  reserveSend(fd: number, len: number, port: number, address: number, encode = ENCODE_NONE): number {
    if (this.sendCount === BATCH) this.flushSends();
    const k = this.sendCount++;
    const m = k * META;
    this.sendMeta[m] = fd;
    this.sendMeta[m + 1] = len | (encode << ENCODE_SHIFT);
    this.sendMeta[m + 2] = port;
    this.sendMeta[m + 3] = address | 0;
    this.queueFlush();
    return k * SLOT;
  }

  /**
   * Packets queued from now on leave from the send thread no earlier than `performanceMs` (a
   * performance.now() time; 0 or a time passed: at once). What is queued already leaves first, with its
   * own. The media bench's phones queue a few ticks ahead, so their packets leave on the 20 ms grid
   * however late the load generator's event loop runs; the gateway never holds its sends. Without the
   * send thread the packets leave when flushed, as always.
   */
  sendNotBefore(performanceMs: number): void {
    const monotonicMs = performanceMs > 0 ? performanceMs - monotonicToPerformance : 0;
    if (monotonicMs === this.sendNotBeforeMs) return;
    this.flushSends();
    this.sendNotBeforeMs = monotonicMs;
  }

  /** Counts a send that cannot go, and tells its callback later, as dgram does (RTCP's BYE closes the sockets from it). */
  refuseSend(err: Error, callback?: (err: Error | null) => void): void {
    this.counts.sendErrors++;
    if (callback) queueMicrotask(() => callback(err));
  }

  /**
   * In a tick, the batch leaves after the tick's callbacks (a microtask), so a frame played out leaves
   * in its tick. Outside one (a SIP request hanging a call up) it leaves at the end of the loop
   * turn (setImmediate), with everything the turn's other I/O callbacks queued: a mass hang-up's
   * hundreds of BYE requests, each sending an RTCP BYE and closing two sockets, then make one batch
   * for the send thread and one pass of closes, not one of each per request.
   */
  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    if (this.clock.ticking === false) setImmediate(this.flushSends);
    else queueMicrotask(this.flushSends);
  }

  private readonly flushSends = (): void => {
    this.flushQueued = false;
    const n = this.sendCount;
    if (n > 0) {
      this.sendCount = 0;
      const callbacks = this.sendCallbacks;
      this.sendCallbacks = [];
      const failed = this.addon.sendBatch(this.sendData, this.sendMeta, n, this.ioUring, this.sendThread, this.sendNotBeforeMs);
      this.counts.sent += n;
      this.counts.sendErrors += failed < 0 ? n : failed;
      // Sent here, each packet's result replaced its length; handed to the send thread, the lengths stay
      // (the packets are on their way, in order before any close: what a callback waits for, as an RTCP
      // BYE's closes the sockets) and failures are counted later, by whichever group flushes next.
      for (const { k, callback } of callbacks) {
        const result = failed < 0 ? failed : (this.sendMeta[k * META + 1] ?? 0);
        callback(result < 0 ? new Error(`send failed (errno ${-result})`) : null);
      }
    }
    this.closeSockets();
  };

  /**
   * Closes the fds of closed sockets, now that their queued packets (an RTCP BYE) have left, and
   * releases their ports. Not during a drain: it maps packets to sockets by the fd list it started
   * with, and a closed fd's number may be reused by the next socket opened. A mass hang-up closes
   * hundreds of sockets in one loop turn: one flush for all of them, not one each. While the send
   * thread still holds packets the addon's close would wait for them: it is tried again a millisecond
   * later instead (or at the next tick's drain, whichever comes first).
   */
  private closeSockets(): void {
    if (this.closing.length === 0 || this.draining) return;
    if (this.addon.sendsQueued() > 0) {
      this.closeRetry ??= setTimeout(() => {
        this.closeRetry = null;
        this.closeSockets();
      }, 1);
      return;
    }
    const closing = this.closing;
    this.closing = [];
    for (const socket of closing) {
      if (this.receiveThread) this.addon.recvUnwatch(this.receiveThread, socket.fd);
      this.addon.close(socket.fd);
      if (this.byFd[socket.fd] === socket) this.byFd[socket.fd] = undefined;
      socket.emit('close');
    }
  }

  remove(socket: NativeSocket): void {
    this.live--;
    this.dirty = !this.recvThread;
    this.closing.push(socket);
    if (this.live === 0) {
      this.sockets = []; // no drain follows to filter them out
      this.hotSet = this.coldSet = NO_SOCKETS;
      this.flushSends();
      this.unsubscribe?.();
      this.unsubscribe = null;
      if (this.receiveThread) this.addon.recvStop(this.receiveThread);
      this.receiveThread = null;
    } else {
      this.queueFlush();
    }
  }

  private readonly drainAll = (_tick: number, sub = 0): void => {
    // Ticks run back to back when the clock catches up after a stall: the previous tick's packets leave
    // now, not with every caught-up tick's at the end (up to 200 ms late for the first of them).
    this.flushSends();
    if (this.dirty) {
      // The sockets closed since the last drain leave the list here, all at once.
      this.sockets = this.sockets.filter((s) => !s.closed);
      // A socket nobody listens to is not read: its packets would be read only to be dropped (the kernel
      // drops them once its buffer is full). Every endpoint listens; a load generator's phone may not.
      const read = this.sockets.filter((s) => s.receiver !== null);
      this.hotSet = readSet(read.filter((s) => !s.cold));
      this.coldSet = readSet(read.filter((s) => s.cold));
      this.dirty = false;
    }
    this.reading(() => {
      if (this.recvThread) {
        this.take();
      } else {
        const subTicks = this.clock.subTicks ?? 1;
        this.drain(subTicks > 1 ? this.socketsReadIn(sub, subTicks) : this.hotSet);
        if (sub === 0 && ++this.ticks % COLD_READ_TICKS === 0) this.drain(this.coldSet);
      }
    });
  };

  /** Reads one socket outside its turn (NativeSocket.readNow); not while a drain runs, nor with a receive thread. */
  readNow(socket: NativeSocket): boolean {
    if (this.draining || this.recvThread) return false;
    const one = this.oneSet;
    one.sockets[0] = socket;
    one.fds[0] = socket.fd;
    this.reading(() => this.drain(one));
    this.counts.readsNow++;
    return true;
  }

  /** Runs `read` as a drain: sockets closed meanwhile keep their fds until it ends (packets map to sockets by them). */
  private reading(read: () => void): void {
    this.draining = true;
    try {
      read();
    } finally {
      this.draining = false;
      this.closeSockets();
    }
  }

  /**
   * The hot sockets whose leg plays out in sub-tick `sub`: each is read once per frame, just before its
   * playout, so sub-ticks cost no more reads than one tick did (a read of an empty socket costs as
   * much as one with a packet). The kernel's arrival times stay exact whenever a packet is read.
   */
  private socketsReadIn(sub: number, subTicks: number): ReadSet {
    const set = this.phaseSet;
    const hot = this.hotSet.sockets;
    if (set.fds.length < hot.length) set.fds = new Int32Array(2 * hot.length);
    let n = 0;
    for (const s of hot) {
      if ((s.readPhase === null ? 0 : s.readPhase.phase % subTicks) !== sub) continue;
      set.sockets[n] = s;
      set.fds[n++] = s.fd;
    }
    set.sockets.length = n;
    return { sockets: set.sockets, fds: set.fds.subarray(0, n) };
  }

  private drain({ sockets, fds }: ReadSet): void {
    if (sockets.length === 0) return;
    // A full batch may have left packets on any socket: read them all again until one is not full.
    for (;;) {
      const n = this.addon.drain(fds, this.out, this.meta, this.arrivals, this.ioUring);
      this.counts.reads++;
      if (n <= 0) break;
      this.deliver(sockets, n);
      if (n < BATCH) break;
    }
  }

  /** What the receive thread read since the last tick (every socket, cold or not: its epoll set costs nothing for idle ones). */
  private take(): void {
    const thread = this.receiveThread;
    if (!thread) return;
    for (;;) {
      const n = this.addon.recvTake(thread, this.out, this.meta, this.arrivals);
      this.counts.reads++;
      if (n <= 0) break;
      this.deliver(this.byFd, n);
      if (n < BATCH) break;
    }
  }

  /** `sockets[meta[k * META]]` is packet k's socket: by index in the fds drained, or by fd (take). */
  private deliver(sockets: (NativeSocket | undefined)[], n: number): void {
    const meta = this.meta;
    this.counts.packets += n;
    for (let k = 0; k < n; k++) {
      const m = k * META;
      const socket = sockets[meta[m] ?? -1];
      const len = meta[m + 1] ?? -1;
      if (!socket || socket.closed || !socket.receiver) continue;
      if (len < 0) {
        this.counts.truncated++;
        continue;
      }
      const arrival = this.arrivals[k] ?? -1;
      // Without the kernel's time (never seen; SO_TIMESTAMPNS is set on every socket) the time is left out:
      // the read's own time says when the socket was read, not when the packet came.
      const info: PacketInfo = {
        address: this.addressOf((meta[m + 3] ?? 0) >>> 0),
        port: meta[m + 2] ?? 0,
        arrivedAt: arrival < 0 ? undefined : arrival + monotonicToPerformance,
      };
      // A view of the shared buffer: the endpoint decodes it before the next packet is delivered.
      socket.receiver(this.out.subarray(k * SLOT, k * SLOT + len), info);
    }
  }

  /** The dotted string of a sender's address, made once per address. */
  private addressOf(n: number): string {
    let s = this.addresses.get(n);
    if (s === undefined) {
      if (this.addresses.size >= 4096) this.addresses.clear();
      s = uintToIpv4(n);
      this.addresses.set(n, s);
    }
    return s;
  }
}

export interface NativeIoCounts {
  packets: number;
  reads: number;
  /** Sockets read outside their turn (readNow: a leg about to conceal a frame). */
  readsNow: number;
  truncated: number;
  sent: number;
  sendErrors: number;
}

let addon: RtpIoAddon | null = null;
let loadError: Error | null = null;
let useIoUring = true;
let useSendThread = true;
let useRecvThread = false;
/** Every clock's reader adds to these (the process has one clock; tests and benches drive their own). */
const processCounts: NativeIoCounts = { packets: 0, reads: 0, readsNow: 0, truncated: 0, sent: 0, sendErrors: 0 };
const readers = new WeakMap<TickSource, NativeRtpIo>();

/** Builds and loads the addon once per process (startup calls it, so a missing compiler fails the start). */
export function nativeRtpIoAddon(): RtpIoAddon {
  addon ??= loadRtpIoAddon();
  return addon;
}

/** The addon, or null when it cannot be built or loaded here (tried once; the reason in nativeRtpIoLoadError). */
export function tryNativeRtpIoAddon(): RtpIoAddon | null {
  if (addon || loadError) return addon;
  try {
    return nativeRtpIoAddon();
  } catch (err) {
    loadError = err instanceof Error ? err : new Error(String(err));
    return null;
  }
}

export function nativeRtpIoLoadError(): Error | null {
  return loadError;
}

/** MEDIA_IO native, or auto without socket workers (the endpoint falls back to dgram when the addon is unavailable). */
export function wantsNativeRtpIo(sip: { mediaIo?: 'auto' | 'dgram' | 'native'; mediaWorkers?: number }): boolean {
  return sip.mediaIo === 'native' || ((sip.mediaIo ?? 'auto') === 'auto' && !sip.mediaWorkers);
}

/** MEDIA_IO_URING=false: readers made from now on use recvmmsg and sendto (a kernel whose io_uring misbehaves). */
export function useIoUringForRtp(on: boolean): void {
  useIoUring = on;
}

/** MEDIA_IO_SEND_THREAD=false: readers made from now on send from the main thread (waiting for the kernel). */
export function useSendThreadForRtp(on: boolean): void {
  useSendThread = on;
}

/** MEDIA_IO_RECV_THREAD=true: readers made from now on take their packets from the addon's receive thread. */
export function useRecvThreadForRtp(on: boolean): void {
  useRecvThread = on;
}

/** The batched reader of the sockets of endpoints playing out on `clock`, made on first use. */
export function nativeRtpIoFor(clock: TickSource): NativeRtpIo {
  let io = readers.get(clock);
  if (!io) {
    io = new NativeRtpIo(nativeRtpIoAddon(), clock, processCounts, useIoUring, useSendThread, useRecvThread);
    readers.set(clock, io);
  }
  return io;
}

/** The process's batched I/O counters, or null when no socket was ever opened that way. */
export function nativeRtpIoCounts(): (NativeIoCounts & { sendWaits: number }) | null {
  return addon ? { ...processCounts, sendWaits: addon.sendWaits() } : null;
}
