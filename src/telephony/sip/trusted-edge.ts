// Trusted edge (README "Edge: Kamailio"): when the gateway sits behind an SBC, SIP requests are
// taken only from the edge's addresses, and the caller's real address — which the edge writes in a
// header — stands in for the packet's source in admission (connection CIDRs), the flood guard and
// the logs. The header is believed only on requests that come from the edge: anyone else could
// forge it. Requests inside a dialog the gateway dialled out directly (without an outbound proxy,
// outbound calls do not pass the edge) are still taken from the far end, since they already match our Call-ID and both tags.
// The edge also says whether the caller reached it over TLS and passes on the client certificate
// its handshake verified (sip/kamailio: X-VB-Transport, X-VB-Client-Cert), and whether the caller's
// media to it is SRTP that its rtpengine terminates (X-VB-Media), so a connection's mutual TLS and
// TLS+SRTP demands (secure-trunk.ts) hold behind the edge as they do for a direct caller.
import net from 'node:net';
import type { Remote, SipRequest } from 'sip';
import { cidrContains, isValidCidr } from '../cidr.js';

export interface TrustedEdgeOptions {
  /** The edge's addresses or CIDRs; empty: no edge, every source is taken as it is. */
  cidrs: string[];
  /** Header in which the edge names the caller's source address (e.g. `X-VB-Source: 203.0.113.7`). */
  sourceHeader: string;
}

/** The caller's TLS hop to the edge, as the edge vouches for it (the shape a direct TLS hop has). */
export type EdgeTls = NonNullable<Remote['tls']>;

export type EdgeVerdict = { kind: 'direct' } | { kind: 'edge'; source: string; tls?: EdgeTls; srtp?: boolean } | { kind: 'refuse' };

/** `X-VB-Transport: tls`: the caller reached the edge over TLS. */
export const EDGE_TRANSPORT_HEADER = 'x-vb-transport';
/** `X-VB-Client-Cert: <base64 of the PEM>`: a client certificate the edge's TLS handshake verified. */
export const EDGE_CLIENT_CERT_HEADER = 'x-vb-client-cert';
/** `X-VB-Media: srtp`: the caller offered SRTP (SDES) to the edge, which terminates it (the node sees RTP/AVP). */
export const EDGE_MEDIA_HEADER = 'x-vb-media';
/**
 * `X-VB-Refused: <why>` on a 2xx to a node's dial through the edge: the edge will not let the call
 * stand (the carrier's TLS certificate does not name the host dialled; Kamailio cannot drop a 2xx),
 * so the node acknowledges it, hangs up and fails the dial.
 */
export const EDGE_REFUSED_HEADER = 'x-vb-refused';
/** Longer than any single certificate in PEM, base64 encoded (the framing caps a header line anyway). */
const MAX_CERT_HEADER = 8192;

export class TrustedEdge {
  private readonly cidrs: string[];
  private readonly header: string;

  constructor(o: TrustedEdgeOptions) {
    const bad = o.cidrs.find((c) => !isValidCidr(c));
    if (bad) throw new Error(`invalid trusted edge address ${JSON.stringify(bad)} (sip.trustedEdge.cidrs, SIP_TRUSTED_EDGE)`);
    this.cidrs = o.cidrs;
    this.header = o.sourceHeader.toLowerCase();
  }

  get enabled(): boolean {
    return this.cidrs.length > 0;
  }

  /** The edge's own CIDRs (exempt from the per-source guard: its traffic is many callers'). */
  get edgeCidrs(): readonly string[] {
    return this.cidrs;
  }

  isEdge(address: string): boolean {
    return this.cidrs.some((c) => cidrContains(c, address));
  }

  /**
   * Decides on one request: from the edge → the caller's address from the header (the edge's own
   * when absent: a request the edge made itself, e.g. an OPTIONS probe); from elsewhere → refused,
   * unless no edge is configured or it belongs to a dialog we dialled out (`inOutboundDialog`).
   */
  classify(rq: SipRequest, remote: Remote, inOutboundDialog: () => boolean): EdgeVerdict {
    if (!this.enabled) return { kind: 'direct' };
    if (!this.isEdge(remote.address)) return inOutboundDialog() ? { kind: 'direct' } : { kind: 'refuse' };
    const source = lastValue(rq, this.header);
    const tls = edgeTls(rq);
    // SRTP keys sent in clear signalling protect nothing: the edge's word on SRTP counts over TLS only.
    const srtp = tls !== undefined && lastValue(rq, EDGE_MEDIA_HEADER).toLowerCase() === 'srtp';
    return { kind: 'edge', source: net.isIP(source) ? source : remote.address, ...(tls ? { tls } : {}), ...(srtp ? { srtp } : {}) };
  }
}

/**
 * Repeated headers arrive joined by commas; the edge removes what callers sent and appends its own
 * last (X-Forwarded-For style), so the last value is the one it vouches for.
 */
function lastValue(rq: SipRequest, header: string): string {
  const raw = rq.headers[header];
  return typeof raw === 'string' ? (raw.split(',').pop() ?? '').trim() : '';
}

/** What the edge says about the caller's TLS hop; undefined when it did not come over TLS. */
function edgeTls(rq: SipRequest): EdgeTls | undefined {
  if (lastValue(rq, EDGE_TRANSPORT_HEADER).toLowerCase() !== 'tls') return undefined;
  const encoded = lastValue(rq, EDGE_CLIENT_CERT_HEADER);
  if (!encoded) return { authorized: false, authorizationError: 'no client certificate at the edge' };
  if (encoded.length > MAX_CERT_HEADER || !/^[A-Za-z0-9+/=]+$/.test(encoded)) {
    return { authorized: false, authorizationError: 'unreadable client certificate from the edge' };
  }
  // The edge sends only certificates its handshake verified (against the trunk port's CA).
  return { authorized: true, peerCertificate: Buffer.from(encoded, 'base64') };
}
