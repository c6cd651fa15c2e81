// Edge validation of requests the `sip` parser accepted (it already drops datagrams without
// Via/From/To/Call-ID/CSeq, which cannot be answered at all, RFC 3261 §16.3 / §18.1.2).
import sip, { type SipRequest } from 'sip';

export interface RequestProblem {
  status: number;
  reason: string;
}

export function validateRequest(rq: SipRequest): RequestProblem | null {
  const h = rq.headers;
  if (!h.cseq || typeof h.cseq.seq !== 'number' || !Number.isFinite(h.cseq.seq) || !h.cseq.method) {
    return { status: 400, reason: 'Bad CSeq' };
  }
  // §8.2.2.3 ... and the CSeq method must match the request method (§8.1.1.5).
  if (rq.method !== 'ACK' && rq.method !== 'CANCEL' && h.cseq.method !== rq.method) {
    return { status: 400, reason: 'CSeq Method Mismatch' };
  }
  if (!h.from || !h.from.uri || !h.to || !h.to.uri || typeof h['call-id'] !== 'string' || !h['call-id']) {
    return { status: 400, reason: 'Bad Request' };
  }
  if (typeof rq.uri === 'string' && !sip.parseUri(rq.uri)) return { status: 400, reason: 'Bad Request-URI' };
  if (!h.via[0]?.params || !h.via[0].host) return { status: 400, reason: 'Bad Via' };
  const mf = h['max-forwards'];
  if (mf !== undefined && Number(mf) <= 0 && rq.method !== 'OPTIONS') return { status: 483, reason: 'Too Many Hops' };
  if (rq.method === 'INVITE') {
    const contact = h.contact;
    if (!Array.isArray(contact) || contact.length === 0 || !sip.parseUri(String(typeof contact[0].uri === 'string' ? contact[0].uri : sip.stringifyUri(contact[0].uri)))) {
      return { status: 400, reason: 'Missing Or Bad Contact' };
    }
  }
  return null;
}
