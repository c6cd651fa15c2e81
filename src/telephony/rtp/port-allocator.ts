// Even RTP ports from the configured range (RFC 3550 §11: RTP on even, RTCP on the next odd port).
import dgram from 'node:dgram';
import { literalLookup } from './literal-lookup.js';
import type { MediaSocket } from './socket-protocol.js';
import type { RtpSocketPool } from './socket-pool.js';
import type { NativeRtpIo } from './native-io.js';

const inUse = new Set<number>();

/**
 * Each range is walked: a leg gets the next free port after the one handed out last (from a random
 * slot at first), so a port a call closed comes back only after the rest of the range was handed out.
 * A peer that missed the BYE keeps sending to its old port for a while, and its packets must neither
 * reach the next call there nor latch that call's media (same address, NAT latching) before the new
 * peer's first packet; reusing the lowest (or a random) free port invited exactly that. Media servers
 * walk their ranges for the same reason. The walk costs a lookup per port it passes, mostly none.
 */
const nextSlot = new Map<string, number>();
const MAX_BIND_ATTEMPTS = 64;

export interface PortRange {
  portMin: number;
  portMax: number;
}

/** A UDP socket for media (see literalLookup). */
export function createMediaSocket(): dgram.Socket {
  return dgram.createSocket({ type: 'udp4', lookup: literalLookup() });
}

/** Binds a UDP socket on a free even port of the range; tries random ports, then gives up. */
export async function bindRtpSocket(range: PortRange, address: string): Promise<dgram.Socket> {
  return bindEvenPort(range, (port) => tryBindMediaSocket(port, address));
}

/** As bindRtpSocket, the socket living in one of the pool's worker threads (MEDIA_WORKERS). */
export async function bindPooledRtpSocket(range: PortRange, address: string, pool: RtpSocketPool): Promise<MediaSocket> {
  return bindEvenPort(range, (port) => pool.bind(address, port));
}

/** As bindRtpSocket, the socket read in batches once per media tick (MEDIA_IO=native). */
export async function bindNativeRtpSocket(range: PortRange, address: string, io: NativeRtpIo): Promise<MediaSocket> {
  return bindEvenPort(range, (port) => Promise.resolve(io.bind(address, port)));
}

/** Binds the range's next free even port with `tryBind` (null: taken); the port is released on the socket's close. */
async function bindEvenPort<S extends MediaSocket>(range: PortRange, tryBind: (port: number) => Promise<S | null>): Promise<S> {
  const first = range.portMin + (range.portMin % 2);
  const slots = Math.floor((range.portMax - first) / 2) + 1;
  if (slots <= 0) throw new Error('empty RTP port range');
  const key = `${first}/${slots}`;
  let slot = nextSlot.get(key) ?? Math.floor(Math.random() * slots);
  // Only bind attempts (a port another process holds) are limited; passing a port in use costs a lookup.
  let binds = 0;
  for (let i = 0; i < slots && binds < MAX_BIND_ATTEMPTS; i++, slot = (slot + 1) % slots) {
    const port = first + slot * 2;
    if (inUse.has(port)) continue;
    binds++;
    inUse.add(port);
    const socket = await tryBind(port).catch((err: unknown) => {
      inUse.delete(port);
      throw err;
    });
    if (socket) {
      nextSlot.set(key, (slot + 1) % slots);
      (socket as unknown as NodeJS.EventEmitter).once('close', () => inUse.delete(port));
      return socket;
    }
    inUse.delete(port);
  }
  throw new Error(`no free RTP port in ${range.portMin}-${range.portMax}`);
}

/** Binds RTCP's socket on `rtpPort + 1` (RFC 3550 §11); null when taken (RTCP then only with rtcp-mux). */
export async function bindRtcpSocket(rtpPort: number, address: string): Promise<dgram.Socket | null> {
  return tryBindMediaSocket(rtpPort + 1, address);
}

/** As bindRtcpSocket, read (every COLD_READ_TICKS ticks) and written in the batches of `io` (MEDIA_IO=native); null when it cannot be bound. */
export function bindNativeRtcpSocket(rtpPort: number, address: string, io: NativeRtpIo): MediaSocket | null {
  try {
    return io.bind(address, rtpPort + 1, { cold: true });
  } catch {
    return null;
  }
}

/** A media socket bound to `port`, or null when the port is taken. */
async function tryBindMediaSocket(port: number, address: string): Promise<dgram.Socket | null> {
  const socket = createMediaSocket();
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ port, address, exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return socket;
  } catch {
    socket.close();
    return null;
  }
}
