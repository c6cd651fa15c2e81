// Waiting for the kernel to date received packets by their arrival (SO_TIMESTAMPNS), for tests that
// check a time taken from a batched socket's packet.
import type dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import type { MediaSocket, PacketInfo } from '../../src/telephony/rtp/socket-protocol.js';

/** Keeps the event loop busy for `ms`: packets wait in their sockets meanwhile. */
export function holdLoop(ms: number): void {
  const from = performance.now();
  while (performance.now() - from < ms) {
    /* busy */
  }
}

/** Sends and waits until the kernel took the datagram (loopback queues it at the receiver before that). */
export function sendTo(from: dgram.Socket, bytes: number[], to: MediaSocket): Promise<void> {
  return new Promise((resolve, reject) => from.send(Buffer.from(bytes), to.address().port, '127.0.0.1', (err) => (err ? reject(err) : resolve())));
}

/**
 * Linux turns receive timestamps on for the first socket that asks from a work queue
 * (net_enable_timestamp), and again after the last such socket closed: until that work has run, a
 * packet is stamped when it is read. On a busy machine it can run late, so this waits until a packet
 * held 10 ms in `rx` is dated that much earlier than its read by `tick` (while rx stays open, the
 * timestamps stay on for every socket).
 */
export async function untilKernelStampsArrivals(tx: dgram.Socket, rx: MediaSocket, got: { info: PacketInfo[] }, tick: () => void): Promise<void> {
  for (let i = 0; i < 300; i++) {
    await sendTo(tx, [0], rx);
    holdLoop(10);
    tick();
    const arrivedAt = got.info.at(-1)?.arrivedAt ?? Number.NaN;
    if (performance.now() - arrivedAt >= 9) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the kernel never dated a packet by its arrival');
}
