// The batched RTP I/O addon (native/rtp-io.c) as JavaScript sees it: its functions, the names of its
// threads, how it is built and loaded, and the offset from its clock (CLOCK_MONOTONIC) to
// performance.now()'s. native-io.ts drives it.
import { performance } from 'node:perf_hooks';
import { g711EncodeTables } from '../../media/index.js';
import { addonPath, buildAndLoadAddon } from '../../native-addon.js';

export interface RtpIoAddon {
  open(address: number, port: number): number;
  /** Associates fd with one peer (port 0: with none again); 0, or -errno. See NativeSocket.connectTo. */
  connect(fd: number, address: number, port: number): number;
  port(fd: number): number;
  /** Closes fd once the send thread holds no batch (one may carry the socket's last packet). */
  close(fd: number): number;
  /**
   * async: the addon's send thread sends a copy of the batch; the result then counts earlier batches' failed packets.
   * notBeforeMs (CLOCK_MONOTONIC ms, async only): the thread holds the batch, and those behind it, until then.
   */
  sendBatch(data: Uint8Array, meta: Int32Array, n: number, ioUring: boolean, async: boolean, notBeforeMs?: number): number;
  /** Batches the send thread still holds: closing a socket now would wait for them. */
  sendsQueued(): number;
  /** Times a batch found the send thread's queue full (four batches, sixteen held ones), so the event loop waited for it. */
  sendWaits(): number;
  /** io_uring is compiled in and the kernel allows it (sendBatch and drain use it when asked to). */
  ioUringReady(): boolean;
  /** arrivals: each packet's kernel arrival time in ms of CLOCK_MONOTONIC (-1: none); see monotonicToPerformance. */
  drain(fds: Int32Array, out: Uint8Array, meta: Int32Array, arrivals: Float64Array, ioUring: boolean): number;
  /** A receive thread of the addon's (MEDIA_IO_RECV_THREAD), started; null when it cannot start. Stopped by recvStop or the handle's collection. */
  recvStart(): ReceiveThread | null;
  recvStop(thread: ReceiveThread): void;
  /** The thread reads fd from now on; 0, or -errno. */
  recvWatch(thread: ReceiveThread, fd: number): number;
  /** The thread stops reading fd and drops its packets not taken: call before close(fd), whose number may be reused at once. */
  recvUnwatch(thread: ReceiveThread, fd: number): void;
  /** Packets the thread has read and not handed over yet (-EINVAL: stopped). */
  recvPending(thread: ReceiveThread): number;
  /** What the thread read since the last call, laid out as drain's but with each packet's fd where drain puts an index. */
  recvTake(thread: ReceiveThread, out: Uint8Array, meta: Int32Array, arrivals: Float64Array): number;
  /** Sets the G.711 encode tables (65,536 entries each) sendBatch uses for packets sent as PCM; false if either is short. */
  g711Tables(alaw: Uint8Array, mulaw: Uint8Array): boolean;
}

/** The addon's send and receive threads, by the names native/send-thread.c and recv-thread.c give them (what `top -H` shows). */
export const RTP_SEND_THREAD_NAME = 'vb-rtp-send';
export const RTP_RECV_THREAD_NAME = 'vb-rtp-recv';
/** The addon's handle on one of its receive threads (opaque). */
export type ReceiveThread = { readonly receiveThread: unique symbol };

export const RTP_IO_ADDON = addonPath('rtp-io');

/** Builds the addon if missing or stale and loads it. */
export function loadRtpIoAddon(): RtpIoAddon {
  let loaded: Partial<RtpIoAddon>;
  try {
    loaded = buildAndLoadAddon('rtp-io') as Partial<RtpIoAddon>;
  } catch (err) {
    throw new Error(`MEDIA_IO=native: ${(err as Error).message}`);
  }
  // A binary built from older sources (copied in, its sources not shipped) lacks what this code calls.
  if (typeof loaded.g711Tables !== 'function' || typeof loaded.recvTake !== 'function' || typeof loaded.connect !== 'function')
    throw new Error(`MEDIA_IO=native: ${RTP_IO_ADDON} is older than this code; rebuild it (bash scripts/build-rtp-io.sh --force)`);
  const { alaw, mulaw } = g711EncodeTables();
  if (!loaded.g711Tables(alaw, mulaw)) throw new Error('MEDIA_IO=native: the RTP I/O addon refused the G.711 tables');
  return loaded as RtpIoAddon;
}

/**
 * What to add to a CLOCK_MONOTONIC time in ms (the addon's arrival times) to put it on performance.now()'s
 * timeline: both count that clock (libuv's hrtime), from different origins, so the difference is constant.
 * Read between two hrtime readings, the closest pair of 50: a thread preempted between two readings would
 * put a lasting error of that length into every packet's arrival time.
 */
export const monotonicToPerformance = ((): number => {
  let gap = Infinity;
  let offset = 0;
  for (let i = 0; i < 50; i++) {
    const before = process.hrtime.bigint();
    const perf = performance.now();
    const after = process.hrtime.bigint();
    if (after - before < gap) {
      gap = Number(after - before);
      offset = perf - Number(before + after) / 2e6;
    }
  }
  return offset;
})();
