// Transport names and the URI forms that go with them (RFC 3261 §18, §26.2): which transport a
// dialog runs over, what our Contact says for it, and how a target URI asks for it.
import type { NameAddr, SipRequest, SipUri } from 'sip';

export type SipTransportName = 'udp' | 'tcp' | 'tls';

/** The transport the peer's top Via names (what it expects responses and in-dialog requests over). */
export function transportOfVia(rq: SipRequest): SipTransportName {
  const p = String(rq.headers.via[0]?.protocol ?? 'UDP').toUpperCase();
  return p === 'TLS' ? 'tls' : p === 'TCP' ? 'tcp' : 'udp';
}

/**
 * Our Contact for a dialog on `transport`. Over TLS it names the TLS port: a sips: URI when the
 * dialog is secure (`sips`: §8.1.1.8, the request or target was sips:), else `sip:…;transport=tls`,
 * which keeps the peer's in-dialog requests on TLS and which every TLS peer can route (older stacks,
 * e.g. baresip 1.0, cannot send to a sips: Contact and drop the call).
 */
export function contactFor(transport: SipTransportName, address: string, port: number, tlsPort: number | null, sips = false): NameAddr {
  if (transport === 'tls' && tlsPort !== null) {
    return { uri: sips ? `sips:voxbridge@${address}:${tlsPort}` : `sip:voxbridge@${address}:${tlsPort};transport=tls`, params: {} };
  }
  const t = transport === 'tcp' ? ';transport=tcp' : '';
  return { uri: `sip:voxbridge@${address}:${port}${t}`, params: {} };
}

const isSipsUri = (u: unknown): boolean => (typeof u === 'string' ? /^\s*<?sips:/i.test(u) : (u as SipUri | undefined)?.schema === 'sips');

/**
 * RFC 3261 §8.1.1.8 / §12.1.1: a request asks for a secure dialog when its Request-URI is sips:, or
 * its top Record-Route is, or (without Record-Route) its Contact is.
 */
export function requestIsSips(rq: SipRequest): boolean {
  if (isSipsUri(rq.uri)) return true;
  const rr = rq.headers['record-route'];
  if (Array.isArray(rr) && rr.length > 0) return isSipsUri(rr[0]?.uri);
  const contact = Array.isArray(rq.headers.contact) ? rq.headers.contact[0] : undefined;
  return isSipsUri(contact?.uri);
}

/** A target URI (dial target, a dialog's remote target) that is sips:. */
export const targetIsSips = (target: string): boolean => isSipsUri(target);

/** Makes a target URI go over `transport` (a sips: URI already means TLS). */
export function applyTransport(uri: SipUri, transport: SipTransportName): void {
  if (transport === 'udp' || uri.schema === 'sips') return;
  uri.params.transport = transport;
}

/** The transport a dial target string asks for: sips: or ;transport=tls is TLS, ;transport=tcp TCP. */
export function transportOfTarget(target: string, fallback: SipTransportName): SipTransportName {
  if (/^sips:/i.test(target) || /;transport=tls/i.test(target)) return 'tls';
  if (/;transport=tcp/i.test(target)) return 'tcp';
  if (/;transport=udp/i.test(target)) return 'udp';
  return fallback;
}
