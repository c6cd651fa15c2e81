// Trusted edge (README "Edge: Kamailio"): when the gateway sits behind an SBC, SIP requests are
// taken only from the edge's addresses, and the caller's real address — which the edge writes in a
// header — stands in for the packet's source in admission (connection CIDRs), the flood guard and
// the logs. The header is believed only on requests that come from the edge: anyone else could
// forge it. Requests inside a dialog the gateway dialled out directly (outbound calls do not pass
// the edge) are still taken from the far end, since they already match our Call-ID and both tags.
import net from 'node:net';
import type { Remote, SipRequest } from 'sip';
import { cidrContains, isValidCidr } from '../cidr.js';

export interface TrustedEdgeOptions {
  /** The edge's addresses or CIDRs; empty: no edge, every source is taken as it is. */
  cidrs: string[];
  /** Header in which the edge names the caller's source address (e.g. `X-VB-Source: 203.0.113.7`). */
  sourceHeader: string;
}

export type EdgeVerdict = { kind: 'direct' } | { kind: 'edge'; source: string } | { kind: 'refuse' };

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
    const raw = rq.headers[this.header];
    // Repeated headers arrive joined by commas; the edge appends its own last (X-Forwarded-For
    // style), so the last value is the one it vouches for.
    const source = typeof raw === 'string' ? (raw.split(',').pop() ?? '').trim() : '';
    return { kind: 'edge', source: net.isIP(source) ? source : remote.address };
  }
}
