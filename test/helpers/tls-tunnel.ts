// SIPp (Debian's build) has no TLS transport, so tests put a TLS hop in front of it: SIPp speaks
// SIP over TCP to this tunnel, which carries each connection over real TLS (node:tls) to the
// gateway, and back. The Via transport is rewritten TCP→TLS (same length, so Content-Length holds)
// because the hop is TLS from the gateway's point of view. Everything both ways is recorded.
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';

export interface Tunnel {
  port: number;
  /** Text the gateway sent / received through the tunnel. */
  fromGateway(): string;
  toGateway(): string;
  close(): Promise<void>;
}

const viaToTls = (s: string): string => s.replace(/^Via: SIP\/2\.0\/TCP /gim, 'Via: SIP/2.0/TLS ');

/** TCP in (SIPp) → TLS out (the gateway's TLS port), optionally with a client certificate. */
export async function tlsClientTunnel(o: { target: number; caFile: string; cert?: string; key?: string }): Promise<Tunnel> {
  let from = '';
  let to = '';
  const sockets = new Set<net.Socket>();
  const server = net.createServer((plain) => {
    const secure = tls.connect({
      host: '127.0.0.1',
      port: o.target,
      ca: readFileSync(o.caFile),
      ...(o.cert && o.key ? { cert: readFileSync(o.cert), key: readFileSync(o.key) } : {}),
    });
    sockets.add(plain).add(secure);
    plain.on('data', (d: Buffer) => {
      const text = viaToTls(d.toString('latin1'));
      to += text;
      secure.write(text, 'latin1');
    });
    secure.on('data', (d: Buffer) => {
      from += d.toString('latin1');
      plain.write(d);
    });
    const end = (): void => {
      plain.destroy();
      secure.destroy();
    };
    plain.on('close', end).on('error', end);
    secure.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    fromGateway: () => from,
    toGateway: () => to,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** TLS in (the gateway dialing out) → TCP out (a SIPp callee). */
export async function tlsServerTunnel(o: { target: number; cert: string; key: string }): Promise<Tunnel> {
  let from = '';
  let to = '';
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ cert: readFileSync(o.cert), key: readFileSync(o.key) }, (secure) => {
    const plain = net.connect(o.target, '127.0.0.1');
    sockets.add(plain).add(secure);
    secure.on('data', (d: Buffer) => {
      from += d.toString('latin1');
      plain.write(d);
    });
    plain.on('data', (d: Buffer) => {
      const text = d.toString('latin1');
      to += text;
      secure.write(text, 'latin1');
    });
    const end = (): void => {
      plain.destroy();
      secure.destroy();
    };
    plain.on('close', end).on('error', end);
    secure.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as net.AddressInfo).port,
    fromGateway: () => from,
    toGateway: () => to,
    close: () =>
      new Promise((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
