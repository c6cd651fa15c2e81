// The SIP stack: the `sip` package's transaction layer (RFC 3261 §17) over voxbridge's own
// transports (transports.ts), which frame and check all input before the package's parser. This
// replaces `sip.create()`, whose transports buffer without bound and run backtracking regexes over
// whole messages. Flow tokens and strict-route rewriting of the package are not needed here.
import sip, { type Remote, type SipMessage, type SipRequest, type SipResponse, type SipStack, type TransactionConnection } from 'sip';
import { DEFAULT_SIP_LIMITS, type SipLimits } from './framing.js';
import type { IngressLimits } from './ingress-queue.js';
import {
  DEFAULT_STREAM_LIMITS,
  makeTcpTransport,
  makeTlsTransport,
  makeUdpTransport,
  type Connection,
  type FrontSink,
  type StreamLimits,
  type TlsMaterial,
  type Transport,
} from './transports.js';

export interface StackOptions {
  host: string;
  port: number;
  transports: ('udp' | 'tcp')[];
  /** Host put in the Via of requests we send. */
  publicAddress: string;
  limits?: Partial<SipLimits>;
  stream?: Partial<StreamLimits>;
  /** SO_RCVBUF asked for the UDP socket (the kernel's default when absent). */
  udpReceiveBufferBytes?: number;
  /** UDP datagrams handled a few ms per event-loop turn (ingress-queue.ts); absent: each as it is read. */
  udpIngress?: IngressLimits;
  /** SIP over TLS on its own port (RFC 3261 §26.2; 5061 by convention). */
  tls?: { port: number; material: TlsMaterial } | null;
  onError?: (e: unknown) => void;
  onWarning?: (message: string, fields: Record<string, unknown>) => void;
  /** `wire`: the text sent (serialized once, for the socket and for capture); only messages that went out. */
  onSend?(m: SipMessage, wire: string, target: Remote): void;
  /** `wire`: the message as it arrived, before the stack stamped its Via. */
  onReceive?(m: SipMessage, wire: string, remote: Remote): void;
  /** A message or connection the front refused (counted and logged by the caller). */
  onRefused?(fault: string, remote: { address: string; port: number; protocol: string }, detail?: string): void;
}

/** `hop`: where the request that got this response was sent (the connection it went out on). */
type ResponseCallback = (rs: SipResponse, hop?: Remote) => void;

/** The stack, with connection reuse for requests to a peer that connected to us. */
export interface FrontStack extends SipStack {
  /**
   * `flow`: the TCP/TLS connection a peer opened to us (its address and port as received). While it
   * is open a request goes over it instead of a new connection to the target's address (RFC 5923
   * connection reuse; a peer behind NAT, or without a TLS certificate of its own, can only be reached
   * this way). Once it has closed, the request is routed by its URI as usual. `callback` also learns
   * the hop the request went out on, so a dialog it creates can keep using that connection.
   */
  send(m: SipMessage, callback?: ResponseCallback, flow?: Remote | null): void;
}

export function createSipStack(o: StackOptions, onRequest: (rq: SipRequest, remote: Remote) => void): FrontStack {
  const limits = { ...DEFAULT_SIP_LIMITS, ...o.limits };
  const streamLimits = { ...DEFAULT_STREAM_LIMITS, ...o.stream };
  const errorLog = o.onError ?? (() => {});
  const sink: FrontSink = {
    message: (m, remote, wire) => dispatch(m, remote, wire),
    refused: (fault, remote, detail) => o.onRefused?.(fault, remote, detail),
    warn: (message, fields) => o.onWarning?.(message, fields),
  };
  const transports: Record<string, Transport> = {};
  if (o.transports.includes('udp')) transports.UDP = makeUdpTransport(o.host, o.port, limits, sink, o.udpReceiveBufferBytes, o.udpIngress);
  if (o.transports.includes('tcp')) transports.TCP = makeTcpTransport(o.host, o.port, limits, streamLimits, sink);
  if (o.tls) transports.TLS = makeTlsTransport(o.host, o.tls.port, o.tls.material, limits, streamLimits, sink);

  /** Stamps our Via on requests at send time (the package leaves that to its transport), then serializes once. */
  const wrap = (cn: Connection, target: Remote): TransactionConnection => ({
    protocol: cn.protocol,
    release: () => cn.release(),
    send(m) {
      if ('method' in m && m.method) {
        // The user agent always puts an empty Via for us first; without one there is nothing to stamp.
        const via = m.headers.via[0];
        if (!via) throw new Error(`request ${m.method} without a Via to stamp`);
        via.host = o.publicAddress;
        via.port = cn.protocol === 'TLS' && o.tls ? o.tls.port : o.port;
        via.protocol = cn.protocol;
        if (cn.protocol === 'UDP') via.params.rport = null;
      }
      const wire = sip.stringify(m);
      if (cn.send(m, wire)) o.onSend?.(m, wire, target);
    },
  });
  const transportFor = (target: Remote): Transport => {
    const t = transports[target.protocol.toUpperCase()];
    if (!t) throw new Error(`transport ${target.protocol} not enabled`);
    return t;
  };
  const open = (target: Remote, onError?: (e: Error) => void): TransactionConnection => wrap(transportFor(target).open(target, onError), target);
  const get = (target: Remote): TransactionConnection | undefined => {
    const cn = transportFor(target).get(target);
    return cn && wrap(cn, target);
  };

  const transaction = sip.makeTransactionLayer({}, open);

  function dispatch(m: SipMessage, remote: Remote, wire: string): void {
    o.onReceive?.(m, wire, remote);
    try {
      const isRequest = 'method' in m && !!m.method;
      const t = isRequest ? transaction.getServer(m) : transaction.getClient(m);
      if (t) {
        t.message?.(m, remote);
        return;
      }
      if (!isRequest) return; // a stray response: no transaction, nothing to do (§17.1.3)
      const rq = m;
      if (rq.method === 'ACK') {
        onRequest(rq, remote);
        return;
      }
      const cn = get(remote);
      if (!cn) return; // the connection closed before we could answer
      const st = transaction.createServerTransaction(rq, cn);
      try {
        onRequest(rq, remote);
      } catch (e) {
        st.send(sip.makeResponse(rq, 500, 'Server Internal Error'));
        throw e;
      }
    } catch (e) {
      errorLog(e);
    }
  }

  /** Tries the resolved targets in order, moving on when one answers 503 (RFC 3263 §4.3). */
  function sequentialSearch(addresses: Remote[], rq: SipRequest, callback: ResponseCallback): void {
    if (rq.method !== 'CANCEL') rq.headers.via.unshift({ params: {} });
    let last: number | undefined;
    let onResponse: ResponseCallback;
    const searching: ResponseCallback = (rs, hop) => {
      last = rs.status;
      if (rs.status === 503) return next();
      if (rs.status > 100) onResponse = callback;
      callback(rs, hop);
    };
    const next = (): void => {
      onResponse = searching;
      const address = addresses.shift();
      if (!address) {
        onResponse = callback;
        callback(sip.makeResponse(rq, last ?? 404));
        return;
      }
      try {
        const client = transaction.createClientTransaction(
          open(address, () => client.message(sip.makeResponse(rq, 503))),
          rq,
          (rs: SipResponse) => onResponse(rs, address),
        );
      } catch {
        onResponse(sip.makeResponse(rq, 503));
      }
    };
    next();
  }

  /** The flow as a target when its connection is still open (UDP has no connections to reuse). */
  const openFlow = (flow: Remote | null | undefined): Remote | null => {
    if (!flow || flow.protocol.toUpperCase() === 'UDP') return null;
    const t = transports[flow.protocol.toUpperCase()];
    return t?.get(flow) ? { protocol: flow.protocol, address: flow.address, port: flow.port } : null;
  };

  return {
    send(m: SipMessage, callback?: ResponseCallback, flow?: Remote | null) {
      if (!('method' in m) || !m.method) {
        transaction.getServer(m)?.send?.(m);
        return;
      }
      const rq = m;
      let hop = sip.parseUri(rq.uri);
      const route = rq.headers.route;
      const firstRoute = route?.[0];
      if (route && firstRoute) {
        const first = sip.parseUri(firstRoute.uri);
        if (first) {
          hop = first;
          // Strict router (§16.12.1.1 / §12.2.1.1): its URI becomes the Request-URI.
          if (first.params.lr === undefined) {
            route.shift();
            route.push({ uri: rq.uri, params: {} });
            rq.uri = first;
          }
        }
      }
      // RFC 3261 §26.2.2: a sips: URI is reached over TLS only.
      if (hop && hop.schema === 'sips' && !hop.params.transport) hop = { ...hop, params: { ...hop.params, transport: 'tls' } };
      if (!hop) {
        errorLog(new Error(`cannot route ${sip.stringifyUri(rq.uri)}`));
        callback?.(sip.makeResponse(rq, 400, 'Bad Request-URI'));
        return;
      }
      const deliver = (addresses: Remote[]): void => {
        if (rq.method === 'ACK') {
          if (!Array.isArray(rq.headers.via)) rq.headers.via = [];
          if (rq.headers.via.length === 0) rq.headers.via.unshift({ params: { branch: sip.generateBranch() } });
          const address = addresses[0];
          if (!address) {
            errorLog(new Error(`ACK: could not resolve ${sip.stringifyUri(rq.uri)}`));
            return;
          }
          try {
            const cn = open(address, errorLog);
            cn.send(rq);
            cn.release();
          } catch (e) {
            errorLog(e);
          }
          return;
        }
        sequentialSearch(addresses, rq, callback ?? (() => {}));
      };
      const reused = openFlow(flow);
      if (reused) deliver([reused]);
      else sip.resolve(hop, deliver);
    },
    destroy() {
      transaction.destroy();
      for (const t of Object.values(transports)) t.destroy();
    },
    hostname: () => o.publicAddress,
  };
}
