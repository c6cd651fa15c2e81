// Stream sockets read at the media clock, their clients' text frames parsed here. Each audio.input
// message, read the usual way, costs an epoll wake-up, a read(2), a `Buffer` and a `'data'` event through
// the socket's `Readable`, then `ws`'s `Receiver` (a `Writable`) before its `'message'`: more than half of
// what the gateway spends on a socket→RTP call's input (BENCHMARKS.md, fortieth and forty-first passes).
// Here every taken socket gets one non-blocking recv(2) per sub-tick from the addon, all in one call, and a
// complete, masked, unfragmented text frame becomes the same `'message'` event on the WebSocket.
//
// Everything else goes to `ws` as it came: a ping or pong frame (whole, so it answers and counts it as it
// does), and from the first frame of any other kind (close, binary, fragmented, oversized, unmasked,
// reserved bits, invalid UTF-8) the rest of the stream, the socket then read by Node again for good, so
// `ws` applies RFC 6455 and its limits exactly as before. End of stream and read errors are handed back
// the same way: Node's own read then finds them and closes the socket as it always did.
//
// Node has no API to stop reading a socket it owns: its handle's reads are stopped and the socket's
// `_read` shadowed (Node's private parts, as fdOf's descriptor), undone on hand-back.
import { isUtf8 } from 'node:buffer';
import { constants, endianness } from 'node:os';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import type { TickSource } from '../media/index.js';
import { fdOf, tcpSendQueueAddon, type TcpSendQueueAddon } from './tcp-send-queue.js';

/** Where one sub-tick's reads land: every socket's bytes one after another (~400 sockets × one message). */
const READ_BUFFER_BYTES = 1 << 20;
/** At most this much from one socket in one read: a client sending much more waits for the next call. */
const MAX_READ_EACH = 64 * 1024;
/** Larger text messages are ws's to assemble (an audio.input of 200 ms is about 2.2 KB). */
const MAX_OWN_MESSAGE_BYTES = 64 * 1024;
const { EAGAIN, ENOBUFS } = constants.errno;

interface HandleInternals {
  reading?: boolean;
  readStop?: () => number;
}
type ReadableSocket = Socket & { _handle?: HandleInternals | null; _read: (n: number) => void; _readableState: { reading: boolean } };
interface WsInternals {
  _socket?: ReadableSocket;
  _receiver?: NodeJS.WritableStream & { _bufferedBytes?: number; _state?: number; _fragmented?: number | false; _maxPayload?: number };
}

interface TakenSocket {
  readonly ws: WebSocket;
  readonly socket: ReadableSocket;
  readonly receiver: NonNullable<WsInternals['_receiver']>;
  readonly fd: number;
  /** Text frames up to this size are parsed here; larger ones are ws's (to assemble, or to refuse above its maxPayload). */
  readonly maxOwnBytes: number;
  /** The start of a frame not yet all read. */
  pending: Buffer | null;
  handedBack: boolean;
  /** ws's `'data'` listener, off the socket while it is taken (a read below would feed it too). */
  readonly dataListeners: ((chunk: Buffer) => void)[];
}

const readNothing = (): void => undefined;

export class StreamTickReader {
  /** By descriptor: a socket's entry goes when it is handed back or closed (the kernel drops a closed descriptor from epoll). */
  private readonly taken = new Map<number, TakenSocket>();
  private readonly fds = new Int32Array(1024);
  private readonly results = new Int32Array(1024);
  private buffer: Buffer | null = null;
  private epfd = -1;
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly clock: Pick<TickSource, 'subscribeEarly'>,
    private readonly addon: Pick<TcpSendQueueAddon, 'pollCreate' | 'pollAdd' | 'pollRemove' | 'pollClose' | 'recvReady'>,
  ) {}

  /** A reader on `clock`, or null where the addon cannot be loaded or the clock has no early phase. */
  static on(clock: Pick<TickSource, 'subscribeEarly'>): StreamTickReader | null {
    const addon = tcpSendQueueAddon();
    return addon && clock.subscribeEarly ? new StreamTickReader(clock, addon) : null;
  }

  /** Sockets read here now. */
  get size(): number {
    return this.taken.size;
  }

  /**
   * Reads `ws`'s socket from now on, in place of Node and `ws`'s `Receiver`; false (nothing changed)
   * where it cannot: TLS, a socket already closing, a `Receiver` in the middle of a frame. Call it where
   * the socket would otherwise be resumed: while `ws` is paused, after the upgrade.
   */
  take(ws: WebSocket): boolean {
    const { _socket: socket, _receiver: receiver } = ws as unknown as WsInternals;
    if (!socket || !receiver || socket.destroyed || !socket.readable || ws.readyState !== ws.OPEN) return false;
    if ((receiver._bufferedBytes ?? 1) !== 0 || receiver._state !== 0 || receiver._fragmented) return false;
    const fd = fdOf(socket);
    const handle = socket._handle;
    if (fd === null || !handle || typeof handle.readStop !== 'function') return false;
    if (this.epfd < 0) {
      const epfd = this.addon.pollCreate();
      if (epfd < 0) return false;
      this.epfd = epfd;
    }
    if (this.addon.pollAdd(this.epfd, fd) !== 0) return false;
    socket._read = readNothing;
    if (handle.reading) {
      handle.reading = false;
      handle.readStop();
    }
    const dataListeners = socket.listeners('data') as TakenSocket['dataListeners'];
    socket.removeAllListeners('data');
    const maxOwnBytes = Math.min(MAX_OWN_MESSAGE_BYTES, receiver._maxPayload || Infinity);
    const t: TakenSocket = { ws, socket, receiver, fd, maxOwnBytes, pending: null, handedBack: false, dataListeners };
    this.taken.set(fd, t);
    socket.once('close', () => this.forget(t));
    this.unsubscribe ??= this.clock.subscribeEarly!(this.readAll);
    // What Node read while ws was paused comes first.
    const early = (socket as Socket).read() as Buffer | null;
    if (early) this.frames(t, early);
    return true;
  }

  private readonly readAll = (): void => {
    this.buffer ??= Buffer.allocUnsafe(READ_BUFFER_BYTES);
    // A few rounds at most: what is still waiting after them is read at the next sub-tick.
    for (let round = 0, full = true; full && round < 8 && this.epfd >= 0; round++) {
      const ready = this.addon.recvReady(this.epfd, this.buffer, this.fds, this.results, MAX_READ_EACH);
      if (ready < 0) {
        // The epoll descriptor failed: nothing would be read again, so Node reads every socket from here.
        for (const t of [...this.taken.values()]) this.handBack(t, t.pending);
        return;
      }
      full = ready === this.fds.length; // more may be ready than one call reports
      let offset = 0;
      for (let i = 0; i < ready; i++) {
        const r = this.results[i]!;
        if (r === -ENOBUFS) {
          full = true; // still ready: the next call reads it, once this one's frames are used
          continue;
        }
        const chunk = r > 0 ? this.buffer.subarray(offset, (offset += r)) : null;
        const t = this.taken.get(this.fds[i]!);
        if (!t || t.handedBack || t.socket.destroyed) continue;
        if (chunk) this.frames(t, chunk);
        else if (r !== -EAGAIN) this.handBack(t, t.pending); // 0 (end of stream) or an error: Node's read finds it again
      }
    }
  };

  private forget(t: TakenSocket): void {
    if (this.taken.get(t.fd) === t) this.taken.delete(t.fd);
    if (this.taken.size > 0) return;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.epfd >= 0) this.addon.pollClose(this.epfd);
    this.epfd = -1;
  }

  /** Parses the client's frames in `chunk` (RFC 6455 §5.2); `chunk` is only valid during the call. */
  private frames(t: TakenSocket, chunk: Buffer): void {
    const data = t.pending ? Buffer.concat([t.pending, chunk]) : chunk;
    t.pending = null;
    let at = 0;
    while (data.length - at >= 2) {
      if (t.socket.destroyed) return;
      const b0 = data[at]!;
      const b1 = data[at + 1]!;
      let length = b1 & 0x7f;
      let head = 6; // two bytes, the masking key
      if (length === 126) {
        if (data.length - at < 4) break;
        length = data.readUInt16BE(at + 2);
        head = 8;
      }
      const ping = b0 === 0x89 || b0 === 0x8a; // FIN, ping or pong, no reserved bits
      const text = b0 === 0x81;
      if (!(b1 & 0x80) || (b1 & 0x7f) === 127 || length > t.maxOwnBytes || (!text && !ping) || (ping && length > 125)) {
        this.handBack(t, data.subarray(at)); // ws's to handle, or to refuse
        return;
      }
      const end = at + head + length;
      if (data.length < end) break;
      if (ping) {
        t.receiver.write(Buffer.from(data.subarray(at, end)));
        at = end;
        continue;
      }
      const payload = unmask(data, at + head - 4, at + head, length);
      if (!isUtf8(payload)) {
        this.handBack(t, data.subarray(at)); // ws closes with 1007
        return;
      }
      at = end;
      t.ws.emit('message', payload, false);
      if (t.handedBack) return;
    }
    if (at < data.length) t.pending = Buffer.from(data.subarray(at)); // a copy: `chunk` is the shared read buffer's
  }

  /** Node reads the socket again, `ws` parses what it reads; `rest` (a frame's start on) goes to `ws` first. */
  private handBack(t: TakenSocket, rest: Buffer | null): void {
    if (t.handedBack) return;
    t.handedBack = true;
    t.pending = null;
    const socket = t.socket;
    delete (socket as Partial<ReadableSocket>)._read;
    if (socket.destroyed) return this.forget(t);
    this.addon.pollRemove(this.epfd, t.fd);
    this.forget(t);
    for (const listener of t.dataListeners) socket.on('data', listener);
    socket._readableState.reading = false; // set when `readNothing` was called, cleared only by a push that never came
    t.ws.resume(); // Node's read starts in a later turn of the loop, after `rest` is written
    if (rest && rest.length > 0) t.receiver.write(Buffer.from(rest));
  }
}

/** The masking key read as one 32-bit word in the machine's order, so a word of payload is unmasked in one XOR. */
const readKeyWord = endianness() === 'LE' ? (b: Buffer, at: number) => b.readInt32LE(at) : (b: Buffer, at: number) => b.readInt32BE(at);

/** The payload of a client frame, unmasked into a new buffer (RFC 6455 §5.3). */
function unmask(data: Buffer, keyAt: number, payloadAt: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  data.copy(out, 0, payloadAt, payloadAt + length);
  let i = 0;
  if ((out.byteOffset & 3) === 0 && length >= 4) {
    // Node's buffer pool hands out 8-byte aligned slices
    const words = new Int32Array(out.buffer, out.byteOffset, length >>> 2);
    const key = readKeyWord(data, keyAt);
    for (let w = 0; w < words.length; w++) words[w]! ^= key;
    i = words.length * 4;
  }
  for (; i < length; i++) out[i]! ^= data[keyAt + (i & 3)]!;
  return out;
}
