// Secure trunks: what an offer says about SRTP (RFC 4568 SDES), whether this gateway can
// take it, and a connection's demands on an inbound call (TLS, SRTP, a client certificate).
// Every refusal is a SIP final response whose reason phrase names what was missing.
import { X509Certificate } from 'node:crypto';
import type { Remote } from 'sip';
import type { ConnectionRecord } from '../store/index.js';
import { SipError } from './sip/errors.js';

export interface MediaSecurity {
  /** The audio m= line's transport protocol (RTP/AVP, RTP/SAVP, …); null without audio. */
  protocol: string | null;
  /** RTP/SAVP or RTP/SAVPF with at least one a=crypto line: SRTP keyed by SDES. */
  sdes: boolean;
  /** The offer asks for SRTP in any form (SAVP profile), keyed by SDES or not. */
  secureProfile: boolean;
}

/** Reads the first audio stream's profile and crypto attributes (a line scan: bodies are capped by the SIP front). */
export function mediaSecurityOf(sdp: string): MediaSecurity {
  let protocol: string | null = null;
  let inAudio = false;
  let crypto = false;
  for (const raw of sdp.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('m=')) {
      if (protocol !== null) break; // only the first audio stream counts (as negotiate() does)
      const parts = line.slice(2).split(' ');
      inAudio = parts[0] === 'audio';
      if (inAudio) protocol = parts[2] ?? '';
    } else if (inAudio && line.startsWith('a=crypto:')) {
      crypto = true;
    }
  }
  const secureProfile = protocol !== null && /(^|\/)SAVPF?$/i.test(protocol);
  return { protocol, sdes: secureProfile && /^RTP\/SAVPF?$/i.test(protocol ?? '') && crypto, secureProfile };
}

/**
 * An offer we cannot answer truthfully is refused (RFC 3264 §6: an answer must keep the offered
 * profile; answering RTP/SAVP with plain RTP would silently drop the caller's encryption).
 * `canSrtp`: rtpengine anchors media and terminates SRTP.
 */
export function checkOfferSecurity(offer: string, canSrtp: boolean): MediaSecurity {
  const sec = mediaSecurityOf(offer);
  if (!sec.secureProfile) return sec;
  if (!canSrtp) throw new SipError(488, 'Not Acceptable Here (SRTP not available)');
  // DTLS-SRTP (UDP/TLS/RTP/SAVP) is WebRTC's; SIP trunks key SRTP with SDES, and need a=crypto for it.
  if (!sec.sdes) throw new SipError(488, 'Not Acceptable Here (SRTP needs SDES a=crypto)');
  return sec;
}

/**
 * The connection's demands on an inbound call: a client certificate (mutual TLS), TLS signalling
 * and SRTP media when `require_secure`. `listenerAuthorized` covers the case without a
 * connection-specific CA: the handshake checked the certificate against sip.tls.caFile.
 */
export function checkInboundSecurity(c: ConnectionRecord | null, remote: Remote, offer: string | null): void {
  if (!c) return;
  // Behind a trusted edge the hop is the edge's; the caller's TLS hop to the edge is in remote.tls.
  const overTls = remote.protocol.toUpperCase() === 'TLS' || remote.tls !== undefined;
  if (c.require_client_cert) {
    if (!overTls) throw new SipError(403, 'Forbidden (TLS Client Certificate Required)');
    const why = clientCertProblem(c, remote.tls);
    if (why) throw new SipError(403, `Forbidden (Client Certificate ${why})`);
  }
  if (!c.require_secure) return;
  if (!overTls) throw new SipError(403, 'Forbidden (TLS Required)');
  if (!offer) throw new SipError(488, 'Not Acceptable Here (SRTP Required, no offer)');
  // Behind a trusted edge that terminates SRTP the offer here is RTP/AVP; the edge says what the caller offered it.
  if (!mediaSecurityOf(offer).sdes && !remote.edgeSrtp) throw new SipError(488, 'Not Acceptable Here (SRTP Required)');
}

/** Why the peer's certificate does not satisfy the connection, or null when it does. */
export function clientCertProblem(c: Pick<ConnectionRecord, 'tls_client_ca' | 'tls_client_subject'>, peer: Remote['tls']): string | null {
  if (!peer?.peerCertificate) return 'Required';
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(peer.peerCertificate);
  } catch {
    return 'Unreadable';
  }
  const now = Date.now();
  if (Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) < now) return 'Expired';
  if (c.tls_client_ca) {
    let ca: X509Certificate;
    try {
      ca = new X509Certificate(c.tls_client_ca);
    } catch {
      return 'CA Unreadable';
    }
    // The connection's CA must have issued it directly (no intermediates: carriers pin one CA).
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return 'Not Trusted';
  } else if (!peer.authorized) {
    return 'Not Trusted';
  }
  if (c.tls_client_subject && !subjectMatches(cert, c.tls_client_subject)) return 'Subject Mismatch';
  return null;
}

function subjectMatches(cert: X509Certificate, want: string): boolean {
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
  if (cn === want) return true;
  // subjectAltName: "DNS:a.example, URI:sip:b.example, IP Address:…"
  return (cert.subjectAltName ?? '').split(/,\s*/).some((entry) => {
    const i = entry.indexOf(':');
    return i > 0 && entry.slice(i + 1) === want;
  });
}
