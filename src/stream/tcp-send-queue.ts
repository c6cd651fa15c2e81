// The kernel's share of a stream socket's send queue, bounded (see native/tcp-send-queue.c): without a
// bound, audio.output for a client that is not keeping up waits in the kernel's send buffer (up to
// megabytes, minutes of audio) where nothing can drop it. With TCP_NOTSENT_LOWAT the kernel takes a
// few frames more than it has sent and Node keeps the rest, where the stream connection counts and
// drops it (stream-connection.ts).
import type { Socket } from 'node:net';
import { buildAndLoadAddon } from '../native-addon.js';

/** Bytes written and not yet sent that the kernel accepts before the socket stops being writable: ~6 audio.output frames. */
export const UNSENT_LOWAT_BYTES = 2048;

export interface TcpSendQueueAddon {
  notSentLowat(fd: number, bytes: number): number;
  /** One send(2) of `data`'s first `length` bytes, never blocking: the bytes the kernel took, or -errno. */
  sendNow(fd: number, data: Buffer, length: number): number;
  /** An epoll descriptor for recvReady (src/stream/tick-reader.ts), or -errno. */
  pollCreate(): number;
  /** Watches `fd` for bytes to read (level-triggered): 0 or -errno. */
  pollAdd(epfd: number, fd: number): number;
  pollRemove(epfd: number, fd: number): number;
  pollClose(epfd: number): number;
  /**
   * Reads once, never blocking, each descriptor of `epfd` with something to read, into `into` one after
   * another (at most `maxEach` from one): fds[i] is the descriptor, results[i] the bytes, 0 at end of
   * stream or -errno (-EAGAIN: nothing after all; -ENOBUFS: not read, `into` was full). Returns how many
   * were ready, or -errno.
   */
  recvReady(epfd: number, into: Buffer, fds: Int32Array, results: Int32Array, maxEach: number): number;
}

let addon: TcpSendQueueAddon | null | undefined;
let loadError: Error | null = null;

/** Builds (if needed) and loads the addon once; at start, so no socket's admission waits for the build script. */
export function tcpSendQueueAddon(): TcpSendQueueAddon | null {
  if (addon !== undefined) return addon;
  try {
    const loaded = buildAndLoadAddon('tcp-send-queue') as Partial<TcpSendQueueAddon>;
    if (typeof loaded.notSentLowat !== 'function' || typeof loaded.sendNow !== 'function' || typeof loaded.recvReady !== 'function')
      throw new Error('the tcp-send-queue addon is older than this code; rebuild it (bash scripts/build-tcp-send-queue.sh --force)');
    addon = loaded as TcpSendQueueAddon;
  } catch (err) {
    loadError = err as Error;
    addon = null;
  }
  return addon;
}

/** The descriptor under a plain TCP socket; null once it is closed, and for TLS (its descriptor carries ciphertext). */
export function fdOf(socket: Socket): number | null {
  if ((socket as Socket & { encrypted?: boolean }).encrypted) return null;
  const fd = (socket as Socket & { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}

/** Caps what the kernel holds unsent for `socket`; the reason when it could not. */
export function boundUnsentBytes(socket: Socket, bytes = UNSENT_LOWAT_BYTES): { bounded: true } | { bounded: false; reason: string } {
  const a = tcpSendQueueAddon();
  if (!a) return { bounded: false, reason: String(loadError?.message ?? 'addon not loaded') };
  const fd = fdOf(socket);
  if (fd === null) return { bounded: false, reason: 'not a plain TCP socket (no file descriptor to set the option on)' };
  const rc = a.notSentLowat(fd, bytes);
  return rc === 0 ? { bounded: true } : { bounded: false, reason: `setsockopt(TCP_NOTSENT_LOWAT) failed: errno ${-rc}` };
}
