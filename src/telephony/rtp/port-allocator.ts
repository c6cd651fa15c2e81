// Even RTP ports from the configured range (RFC 3550 §11: RTP on even, RTCP on the next odd port).
import dgram from 'node:dgram';
import { literalLookup } from './literal-lookup.js';
import type { MediaSocket } from './socket-protocol.js';
import type { RtpSocketPool } from './socket-pool.js';

const inUse = new Set<number>();

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

/** Tries random free even ports of the range with `tryBind` (null: taken); the port is released on the socket's close. */
async function bindEvenPort<S extends MediaSocket>(range: PortRange, tryBind: (port: number) => Promise<S | null>): Promise<S> {
  const first = range.portMin + (range.portMin % 2);
  const slots = Math.floor((range.portMax - first) / 2) + 1;
  if (slots <= 0) throw new Error('empty RTP port range');
  const attempts = Math.min(slots, 64);
  let start = Math.floor(Math.random() * slots);
  for (let i = 0; i < attempts; i++) {
    const port = first + ((start + i * 7919) % slots) * 2;
    if (inUse.has(port)) {
      start++;
      continue;
    }
    inUse.add(port);
    const socket = await tryBind(port).catch((err: unknown) => {
      inUse.delete(port);
      throw err;
    });
    if (socket) {
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
