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
 * Our Contact for a dialog on `transport`. Over TLS it is a sips: URI on the TLS port: §8.1.1.8
 * requires one when the request was sips:, and it keeps the peer's in-dialog requests on TLS.
 */
export function contactFor(transport: SipTransportName, address: string, port: number, tlsPort: number | null): NameAddr {
  if (transport === 'tls' && tlsPort !== null) return { uri: `sips:voxbridge@${address}:${tlsPort}`, params: {} };
  const t = transport === 'tcp' ? ';transport=tcp' : '';
  return { uri: `sip:voxbridge@${address}:${port}${t}`, params: {} };
}

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
