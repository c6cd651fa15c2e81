// Even RTP ports from the configured range (RFC 3550 §11: RTP on even, RTCP on the next odd port).
import dgram from 'node:dgram';
import { literalLookup } from './literal-lookup.js';
import type { MediaSocket } from './socket-protocol.js';
import type { RtpSocketPool } from './socket-pool.js';

const inUse = new Set<number>();

/**
 * A port closed less than this long ago is taken only when no other is free: a peer that missed the
 * BYE keeps sending to it for a while, and its packets must neither reach the next call that gets the
 * port nor latch that call's media (same address, NAT latching) before the new peer's first packet.
 * Media servers do the same by walking the range instead of reusing the lowest free port.
 */
export const PORT_QUARANTINE_MS = 30_000;
const releasedAt = new Map<number, number>();
const MAX_BIND_ATTEMPTS = 64;
const quarantined = (port: number, now: number): boolean => now - (releasedAt.get(port) ?? -Infinity) < PORT_QUARANTINE_MS;

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

/**
 * Tries random free even ports of the range with `tryBind` (null: taken), ports out of quarantine
 * first; the port is released on the socket's close.
 */
async function bindEvenPort<S extends MediaSocket>(range: PortRange, tryBind: (port: number) => Promise<S | null>): Promise<S> {
  const first = range.portMin + (range.portMin % 2);
  const slots = Math.floor((range.portMax - first) / 2) + 1;
  if (slots <= 0) throw new Error('empty RTP port range');
  const now = performance.now();
  for (const allowQuarantined of [false, true]) {
    // From a random slot onwards; only bind attempts (a port another process holds) are limited.
    const start = Math.floor(Math.random() * slots);
    let binds = 0;
    for (let i = 0; i < slots && binds < MAX_BIND_ATTEMPTS; i++) {
      const port = first + ((start + i) % slots) * 2;
      if (inUse.has(port) || (!allowQuarantined && quarantined(port, now))) continue;
      binds++;
      inUse.add(port);
      const socket = await tryBind(port).catch((err: unknown) => {
        inUse.delete(port);
        throw err;
      });
      if (socket) {
        (socket as unknown as NodeJS.EventEmitter).once('close', () => {
          inUse.delete(port);
          releasedAt.set(port, performance.now());
        });
        return socket;
      }
      inUse.delete(port);
    }
  }
  throw new Error(`no free RTP port in ${range.portMin}-${range.portMax}`);
}

/** Binds RTCP's socket on `rtpPort + 1` (RFC 3550 §11); null when taken (RTCP then only with rtcp-mux). */
export async function bindRtcpSocket(rtpPort: number, address: string): Promise<dgram.Socket | null> {
  return tryBindMediaSocket(rtpPort + 1, address);
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
