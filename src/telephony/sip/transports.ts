// UDP and TCP transports of the SIP front, replacing the `sip` package's own: every datagram and
// stream passes the framing layer (framing.ts) before the package's parser, TCP connections have
// an idle and a slow-sender timeout and a cap per source address, and a hostile message is
// answered (or its connection closed), counted and logged while the process keeps serving.
import dgram from 'node:dgram';
import net from 'node:net';
import sip, { type Remote, type SipMessage } from 'sip';
import { frameDatagram, StreamFramer, type FrameResult, type SipLimits } from './framing.js';

export interface StreamLimits {
  /** A connection with no traffic for this long is closed. */
  tcpIdleTimeoutMs: number;
  /** A message started on a connection must be complete within this time (slow-sender defence). */
  tcpMessageTimeoutMs: number;
  maxConnectionsPerSource: number;
  maxConnections: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  tcpIdleTimeoutMs: 180_000,
  tcpMessageTimeoutMs: 10_000,
  maxConnectionsPerSource: 32,
  maxConnections: 4096,
};

/** What a transport tells the stack about: parsed messages and refused input. */
export interface FrontSink {
  message(m: SipMessage, remote: Remote): void;
  /** Counted under `fault`; logged (throttled) by the sink. */
  refused(fault: string, remote: { address: string; port: number; protocol: string }, detail?: string): void;
}

/** One way to send on a transport; the transaction layer releases it when done. */
export interface Connection {
  send(m: SipMessage): void;
  release(): void;
  protocol: string;
}

export interface Transport {
  open(target: Remote, onError?: (e: Error) => void): Connection;
  get(target: Remote): Connection | undefined;
  destroy(): void;
}

/** The parser never sees input the framing refused; what it still cannot read is refused too. */
function parseFramed(text: string): SipMessage | undefined {
  const m = sip.parse(text);
  if (!m || !m.headers) return undefined;
  const h = m.headers;
  if (!Array.isArray(h.via) || !h.via[0]?.host || !h.to?.uri || !h.from?.uri || !h['call-id'] || !h.cseq) return undefined;
  return m;
}

/** Marks the source of a request in its top Via (RFC 3261 §18.2.1, RFC 3581 rport). */
function stampVia(m: SipMessage, address: string, port: number, udp: boolean): void {
  if (!('method' in m) || !m.method) return;
  const via = m.headers.via[0];
  via.params.received = address;
  if (udp && Object.prototype.hasOwnProperty.call(via.params, 'rport')) via.params.rport = String(port);
}

export function makeUdpTransport(host: string, port: number, limits: SipLimits, sink: FrontSink): Transport {
  const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  socket.on('error', (e) => sink.refused('socket_error', { address: host, port, protocol: 'UDP' }, String(e)));
  socket.on('message', (data, rinfo) => {
    const remote = { protocol: 'UDP', address: rinfo.address, port: rinfo.port, local: { address: host, port } };
    const framed = frameDatagram(data, limits);
    if (!framed) return;
    handleFramed(framed, remote, sink, (reply) => socket.send(Buffer.from(reply, 'latin1'), rinfo.port, rinfo.address), true);
  });
  socket.bind(port, host);
  const open = (target: Remote): Connection => ({
    protocol: 'UDP',
    release() {},
    send(m) {
      const s = sip.stringify(m);
      socket.send(Buffer.from(s, 'latin1'), target.port, target.address);
    },
  });
  return { open, get: open, destroy: () => socket.close() };
}

function handleFramed(framed: FrameResult, remote: Remote, sink: FrontSink, reply: (text: string) => void, udp: boolean): void {
  if (framed.kind === 'reject') {
    const r = framed.rejection;
    sink.refused(r.fault, remote, `${r.status} ${r.reason}`);
    if (r.reply) reply(r.reply);
    return;
  }
  const m = parseFramed(framed.text);
  if (!m) {
    sink.refused('unparsable', remote);
    return;
  }
  stampVia(m, remote.address, remote.port, udp);
  sink.message(m, remote);
}

interface TcpConn {
  socket: net.Socket;
  key: string;
  source: string;
}

export function makeTcpTransport(host: string, port: number, limits: SipLimits, stream: StreamLimits, sink: FrontSink): Transport {
  const byRemote = new Map<string, TcpConn>();
  const perSource = new Map<string, number>();
  const keyOf = (address: string, p: number): string => `${address}|${p}`;

  function init(socket: net.Socket, address: string, remotePort: number): TcpConn {
    const conn: TcpConn = { socket, key: keyOf(address, remotePort), source: address };
    byRemote.set(conn.key, conn);
    perSource.set(address, (perSource.get(address) ?? 0) + 1);
    const framer = new StreamFramer(limits);
    const remote = (): Remote => ({ protocol: 'TCP', address, port: remotePort, local: { address: socket.localAddress ?? host, port: socket.localPort ?? port } });
    let messageTimer: NodeJS.Timeout | null = null;
    const armMessageTimer = (): void => {
      if (framer.pending === 0) {
        if (messageTimer) clearTimeout(messageTimer);
        messageTimer = null;
      } else if (!messageTimer) {
        messageTimer = setTimeout(() => {
          sink.refused('slow_sender', remote());
          socket.destroy();
        }, stream.tcpMessageTimeoutMs);
      }
    };
    socket.setTimeout(stream.tcpIdleTimeoutMs, () => {
      sink.refused('idle_timeout', remote());
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => {
      for (const framed of framer.push(chunk)) {
        handleFramed(framed, remote(), sink, (text) => socket.write(text, 'latin1'), false);
      }
      if (framer.broken) {
        socket.end();
        socket.destroySoon?.();
        setTimeout(() => socket.destroy(), 1000).unref();
        return;
      }
      armMessageTimer();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (messageTimer) clearTimeout(messageTimer);
      if (byRemote.get(conn.key) === conn) byRemote.delete(conn.key);
      const n = (perSource.get(address) ?? 1) - 1;
      if (n <= 0) perSource.delete(address);
      else perSource.set(address, n);
    });
    return conn;
  }

  const server = net.createServer((socket) => {
    const address = socket.remoteAddress ?? '';
    if (byRemote.size >= stream.maxConnections || (perSource.get(address) ?? 0) >= stream.maxConnectionsPerSource) {
      sink.refused('connection_limit', { protocol: 'TCP', address, port: socket.remotePort ?? 0 });
      socket.destroy();
      return;
    }
    init(socket, address, socket.remotePort ?? 0);
  });
  server.on('error', (e) => sink.refused('socket_error', { address: host, port, protocol: 'TCP' }, String(e)));
  server.listen(port, host);

  const handle = (conn: TcpConn, onError?: (e: Error) => void): Connection => {
    if (onError) conn.socket.once('error', onError);
    // RFC 3261 §17.2.1: Timer G (retransmitting a non-2xx final) is for unreliable transports. The
    // package's INVITE server transaction resends regardless; this connection object belongs to one
    // transaction, so a second send of the same final response object is dropped here.
    let lastFinal: SipMessage | null = null;
    return {
      protocol: 'TCP',
      release() {
        if (onError) conn.socket.removeListener('error', onError);
      },
      send(m) {
        if ('status' in m && typeof m.status === 'number' && m.status >= 300) {
          if (lastFinal === m) return;
          lastFinal = m;
        }
        if (!conn.socket.destroyed) conn.socket.write(sip.stringify(m), 'latin1');
      },
    };
  };

  return {
    open(target, onError) {
      const existing = byRemote.get(keyOf(target.address, target.port));
      if (existing && !existing.socket.destroyed) return handle(existing, onError);
      const socket = net.connect(target.port, target.address);
      return handle(init(socket, target.address, target.port), onError);
    },
    get(target) {
      const c = byRemote.get(keyOf(target.address, target.port));
      return c && !c.socket.destroyed ? handle(c) : undefined;
    },
    destroy() {
      server.close();
      for (const c of byRemote.values()) c.socket.destroy();
    },
  };
}
