// UDP, TCP and TLS transports of the SIP front, replacing the `sip` package's own: every datagram and
// stream passes the framing layer (framing.ts) before the package's parser, TCP connections have
// an idle and a slow-sender timeout and a cap per source address, and a hostile message is
// answered (or its connection closed), counted and logged while the process keeps serving.
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import sip, { type Remote, type SipMessage } from 'sip';
import { frameDatagram, StreamFramer, type FrameResult, type SipLimits } from './framing.js';
import { IngressQueue, type IngressLimits } from './ingress-queue.js';

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
  /** `wire`: the message as it arrived (framed, before the Via was stamped), for capture. */
  message(m: SipMessage, remote: Remote, wire: string): void;
  /** Counted under `fault`; logged (throttled) by the sink. */
  refused(fault: string, remote: { address: string; port: number; protocol: string }, detail?: string): void;
  /** Something the operator should fix (logged once). */
  warn(message: string, fields: Record<string, unknown>): void;
}

/** One way to send on a transport; the transaction layer releases it when done. */
export interface Connection {
  /** Sends `m`, serialized once by the stack as `wire`; false when nothing went out (see the stream transport). */
  send(m: SipMessage, wire: string): boolean;
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
  if (!via) return; // parseFramed() refuses messages without a Via
  via.params.received = address;
  if (udp && Object.prototype.hasOwnProperty.call(via.params, 'rport')) via.params.rport = String(port);
}

export function makeUdpTransport(
  host: string,
  port: number,
  limits: SipLimits,
  sink: FrontSink,
  receiveBufferBytes?: number,
  ingress: IngressLimits = { budgetMs: 0, maxQueued: 0 },
): Transport {
  // A bigger receive buffer holds a burst that arrives during a GC pause or a busy tick; with the
  // kernel's default (~200 KB, ~90 datagrams) 400 setups/s already overflowed it (drops, retransmissions).
  const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4', ...(receiveBufferBytes ? { recvBufferSize: receiveBufferBytes } : {}) });
  socket.on('error', (e) => sink.refused('socket_error', { address: host, port, protocol: 'UDP' }, String(e)));
  const queue = new IngressQueue({ ...ingress, onError: (err) => sink.warn('SIP datagram handler failed', { err: String(err) }) });
  socket.on('message', (data, rinfo) => {
    const remote = { protocol: 'UDP', address: rinfo.address, port: rinfo.port, local: { address: host, port } };
    const framed = frameDatagram(data, limits);
    if (!framed) return;
    const reply = (text: string) => socket.send(Buffer.from(text, 'latin1'), rinfo.port, rinfo.address);
    // Framing is a bounded scan and refuses garbage at once; parsing and handling wait their turn.
    if (framed.kind === 'reject') handleFramed(framed, remote, sink, reply, true, () => datagramHead(data));
    else if (!queue.push(() => handleFramed(framed, remote, sink, reply, true))) sink.refused('ingress_queue_full', remote);
  });
  socket.bind(port, host, () => {
    // Linux reports twice what it granted (the doubling covers its bookkeeping) and caps it at net.core.rmem_max.
    const granted = socket.getRecvBufferSize() / 2;
    if (receiveBufferBytes && granted < receiveBufferBytes) {
      sink.warn('SIP UDP receive buffer smaller than configured: raise net.core.rmem_max', { asked: receiveBufferBytes, granted });
    }
  });
  const open = (target: Remote): Connection => ({
    protocol: 'UDP',
    release() {},
    send(_m, wire) {
      socket.send(Buffer.from(wire, 'latin1'), target.port, target.address);
      return true;
    },
  });
  return {
    open,
    get: open,
    destroy: () => {
      queue.clear();
      socket.close();
    },
  };
}

/**
 * A refused datagram for the log line (at most 10 a second, refusals.ts): its size and first bytes, so
 * an operator sees what a peer sent without a capture. The logger escapes them.
 */
function datagramHead(data: Buffer): string {
  return `${data.length} bytes, starting ${JSON.stringify(data.subarray(0, 40).toString('latin1'))}`;
}

function handleFramed(framed: FrameResult, remote: Remote, sink: FrontSink, reply: (text: string) => void, udp: boolean, input?: () => string): void {
  if (framed.kind === 'reject') {
    const r = framed.rejection;
    sink.refused(r.fault, remote, `${r.status} ${r.reason}${input ? `; ${input()}` : ''}`);
    if (r.reply) reply(r.reply);
    return;
  }
  const m = parseFramed(framed.text);
  if (!m) {
    sink.refused('unparsable', remote);
    return;
  }
  stampVia(m, remote.address, remote.port, udp);
  sink.message(m, remote, framed.text);
}

interface StreamConn {
  socket: net.Socket;
  key: string;
  source: string;
  tls?: Remote['tls'];
}

/** TLS material of the SIP-over-TLS listener (and of the client side when dialing out). */
export interface TlsMaterial {
  key: string | Buffer;
  cert: string | Buffer;
  /** CAs trusted for peer certificates (client certificates inbound, servers outbound); system CAs when absent. */
  ca?: string | Buffer;
  /** Verify the server certificate when dialing out (off for self-signed carrier test rigs). */
  verifyServer: boolean;
}

/** How a stream transport (TCP or TLS) listens and dials. */
interface StreamKind {
  protocol: 'TCP' | 'TLS';
  listen(onSocket: (s: net.Socket) => void, admit: (raw: net.Socket) => boolean): net.Server;
  connect(port: number, address: string): net.Socket;
  /** What the handshake proved about the peer (TLS only). */
  peer?(s: net.Socket): Remote['tls'];
}

const tcpKind: StreamKind = {
  protocol: 'TCP',
  listen: (onSocket, admit) =>
    net.createServer((s) => {
      if (admit(s)) onSocket(s);
    }),
  connect: (port, address) => net.connect(port, address),
};

function tlsKind(m: TlsMaterial, handshakeTimeoutMs: number): StreamKind {
  return {
    protocol: 'TLS',
    listen(onSocket, admit) {
      // A client certificate is asked for but not required at the handshake: which connection the
      // caller claims decides whether one is needed (checked per INVITE, src/telephony/secure-trunk.ts).
      const server = tls.createServer(
        { key: m.key, cert: m.cert, ca: m.ca, requestCert: true, rejectUnauthorized: false, handshakeTimeout: handshakeTimeoutMs },
        onSocket,
      );
      // Caps apply to the raw connection, before any handshake work is spent on it.
      server.on('connection', (raw: net.Socket) => {
        if (!admit(raw)) raw.destroy();
      });
      server.on('tlsClientError', () => {});
      return server;
    },
    connect: (port, address) =>
      tls.connect({
        port,
        host: address,
        key: m.key,
        cert: m.cert,
        ca: m.ca,
        rejectUnauthorized: m.verifyServer,
        servername: net.isIP(address) ? undefined : address,
      }),
    peer(s) {
      const t = s as tls.TLSSocket;
      const cert = t.getPeerCertificate?.();
      return {
        authorized: t.authorized === true,
        ...(t.authorizationError ? { authorizationError: String(t.authorizationError) } : {}),
        ...(cert && cert.raw ? { peerCertificate: cert.raw } : {}),
      };
    },
  };
}

export function makeTcpTransport(host: string, port: number, limits: SipLimits, stream: StreamLimits, sink: FrontSink): Transport {
  return makeStreamTransport(tcpKind, host, port, limits, stream, sink);
}

/** SIP over TLS (RFC 3261 §26.2): the TCP transport's framing, caps and timeouts over a TLS socket. */
export function makeTlsTransport(host: string, port: number, material: TlsMaterial, limits: SipLimits, stream: StreamLimits, sink: FrontSink): Transport {
  return makeStreamTransport(tlsKind(material, stream.tcpMessageTimeoutMs), host, port, limits, stream, sink);
}

function makeStreamTransport(kind: StreamKind, host: string, port: number, limits: SipLimits, stream: StreamLimits, sink: FrontSink): Transport {
  const byRemote = new Map<string, StreamConn>();
  const perSource = new Map<string, number>();
  const keyOf = (address: string, p: number): string => `${address}|${p}`;
  const protocol = kind.protocol;

  function init(socket: net.Socket, address: string, remotePort: number): StreamConn {
    const conn: StreamConn = { socket, key: keyOf(address, remotePort), source: address };
    byRemote.set(conn.key, conn);
    perSource.set(address, (perSource.get(address) ?? 0) + 1);
    const framer = new StreamFramer(limits);
    const remote = (): Remote => ({
      protocol,
      address,
      port: remotePort,
      local: { address: socket.localAddress ?? host, port: socket.localPort ?? port },
      ...(conn.tls ? { tls: conn.tls } : {}),
    });
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
    // Set once the framing is lost: the answer is flushed, then the connection closes; what the peer
    // keeps sending meanwhile is dropped (closing once: a sender that keeps writing must not pile up
    // close listeners and timers).
    let closing = false;
    socket.on('data', (chunk: Buffer) => {
      if (closing) return;
      for (const framed of framer.push(chunk)) {
        handleFramed(framed, remote(), sink, (text) => socket.write(text, 'latin1'), false);
      }
      if (framer.broken) {
        closing = true;
        if (messageTimer) clearTimeout(messageTimer);
        messageTimer = null;
        socket.end();
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

  const admit = (raw: net.Socket): boolean => {
    const address = raw.remoteAddress ?? '';
    if (byRemote.size >= stream.maxConnections || (perSource.get(address) ?? 0) >= stream.maxConnectionsPerSource) {
      sink.refused('connection_limit', { protocol, address, port: raw.remotePort ?? 0 });
      raw.destroy();
      return false;
    }
    return true;
  };
  const server = kind.listen((socket) => {
    const conn = init(socket, socket.remoteAddress ?? '', socket.remotePort ?? 0);
    if (kind.peer) conn.tls = kind.peer(socket);
  }, admit);
  server.on('error', (e) => sink.refused('socket_error', { address: host, port, protocol }, String(e)));
  server.listen(port, host);

  const handle = (conn: StreamConn, onError?: (e: Error) => void): Connection => {
    if (onError) conn.socket.once('error', onError);
    // RFC 3261 §17.2.1: Timer G (retransmitting a non-2xx final) is for unreliable transports. The
    // package's INVITE server transaction resends regardless; this connection object belongs to one
    // transaction, so a second send of the same final response object is dropped here.
    let lastFinal: SipMessage | null = null;
    return {
      protocol,
      release() {
        if (onError) conn.socket.removeListener('error', onError);
      },
      send(m, wire) {
        if ('status' in m && typeof m.status === 'number' && m.status >= 300) {
          if (lastFinal === m) return false;
          lastFinal = m;
        }
        if (conn.socket.destroyed) return false;
        conn.socket.write(wire, 'latin1');
        return true;
      },
    };
  };

  return {
    open(target, onError) {
      const existing = byRemote.get(keyOf(target.address, target.port));
      if (existing && !existing.socket.destroyed) return handle(existing, onError);
      const socket = kind.connect(target.port, target.address);
      const conn = init(socket, target.address, target.port);
      if (kind.peer) socket.once('secureConnect', () => (conn.tls = kind.peer?.(socket)));
      return handle(conn, onError);
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
