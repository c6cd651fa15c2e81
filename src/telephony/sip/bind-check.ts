// The `sip` package binds its UDP socket and TCP server without error listeners: a port in use
// would surface as an uncaught exception. Check (and, for port 0, choose) the port first so
// start-up fails with a clear error instead.
import dgram from 'node:dgram';
import net from 'node:net';

function udpBind(port: number, host: string): Promise<number | null> {
  const s = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  return new Promise((resolve) => {
    s.once('error', () => resolve(null));
    s.bind(port, host, () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

function tcpListen(port: number, host: string): Promise<boolean> {
  const srv = net.createServer();
  return new Promise((resolve) => {
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** Returns a port free for the configured transports (`port` itself, or any when 0). */
export async function reserveSipPort(port: number, host: string, transports: ('udp' | 'tcp')[]): Promise<number> {
  for (let attempt = 0; attempt < (port === 0 ? 50 : 1); attempt++) {
    let p = port;
    if (transports.includes('udp')) {
      const got = await udpBind(port, host);
      if (got === null) continue;
      p = got;
    } else if (port === 0) {
      const srv = net.createServer();
      p = await new Promise<number>((resolve) =>
        srv.listen(0, host, () => {
          const a = srv.address() as net.AddressInfo;
          srv.close(() => resolve(a.port));
        }),
      );
    }
    if (transports.includes('tcp') && !(await tcpListen(p, host))) continue;
    return p;
  }
  throw new Error(`SIP port ${port} on ${host} is in use (${transports.join('/')})`);
}
