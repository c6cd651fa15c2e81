// A simulated phone's ports: RTP where the kernel puts it, and RTP + 1 held as a real phone holds it for
// RTCP (RFC 3550 §11). The phones offer no rtcp-mux, so the gateway sends its RTCP to port + 1; unheld,
// that port could be anyone's on loopback: another phone's RTP socket (its reports read as RTP) or the
// gateway's SIP port (refused `400 Missing Header Terminator` on the fortieth pass, likely also the thirty-seventh's).
import dgram from 'node:dgram';

interface BoundSocket {
  address(): { port: number };
  close(): void;
}

/** Binds RTP sockets until one has its port + 1 free, and holds that port in a socket that discards what comes. */
export async function bindPhonePorts<S extends BoundSocket>(bindRtp: () => Promise<S>): Promise<{ rtp: S; rtcp: dgram.Socket }> {
  for (let attempt = 0; attempt < 32; attempt++) {
    const rtp = await bindRtp();
    const rtcp = await bindLoopbackOrNull(rtp.address().port + 1);
    if (rtcp) return { rtp, rtcp };
    rtp.close();
  }
  throw new Error('phone: no free pair of ports');
}

function bindLoopbackOrNull(port: number): Promise<dgram.Socket | null> {
  const sock = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    sock.once('error', () => resolve(null));
    sock.bind(port, '127.0.0.1', () => resolve(sock));
  });
}

/** A phone socket bound on loopback at a port the kernel picks. */
export async function bindLoopbackUdp(): Promise<dgram.Socket> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((res) => sock.bind(0, '127.0.0.1', () => res()));
  return sock;
}
