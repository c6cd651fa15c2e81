// Edge validation of requests the `sip` parser accepted (it already drops datagrams without
// Via/From/To/Call-ID/CSeq, which cannot be answered at all, RFC 3261 §16.3 / §18.1.2).
import sip, { type SipRequest } from 'sip';

export interface RequestProblem {
  status: number;
  reason: string;
  /** Headers the answer must carry (Accept on 415, Unsupported on 420). */
  headers?: Record<string, string>;
}

/** Option tags we implement (none beyond the base spec): anything in Require is refused 420 (§8.2.2.3). */
const SUPPORTED_EXTENSIONS = new Set<string>();

/** A From/To URI: a SIP URI the parser reads, or another absolute URI (tel:, RFC 3966) by its scheme. */
function isAddress(uri: unknown): boolean {
  if (typeof uri !== 'string') return typeof uri === 'object' && uri !== null;
  if (/^sips?:/i.test(uri)) return !!sip.parseUri(uri);
  const colon = uri.indexOf(':');
  return colon > 0 && /^[a-z][a-z0-9+.-]*$/i.test(uri.slice(0, colon)) && !/[\s"<>]/.test(uri);
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
  if (!isAddress(h.from.uri)) return { status: 400, reason: 'Bad From Header' };
  if (!isAddress(h.to.uri)) return { status: 400, reason: 'Bad To Header' };
  if (!h.via[0]?.params || !h.via[0].host) return { status: 400, reason: 'Bad Via' };
  const mf = h['max-forwards'];
  if (mf !== undefined && Number(mf) <= 0 && rq.method !== 'OPTIONS') return { status: 483, reason: 'Too Many Hops' };
  const require = typeof h.require === 'string' ? h.require : '';
  if (require && rq.method !== 'ACK' && rq.method !== 'CANCEL') {
    const unknown = require
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t && !SUPPORTED_EXTENSIONS.has(t.toLowerCase()));
    if (unknown.length) return { status: 420, reason: 'Bad Extension', headers: { unsupported: unknown.join(', ') } };
  }
  // §8.2.3: a body we cannot read is refused 415 with what we accept.
  if (rq.content && (rq.method === 'INVITE' || rq.method === 'ACK')) {
    const type = (String(h['content-type'] ?? '').split(';')[0] ?? '').trim().toLowerCase();
    if (type !== 'application/sdp' && rq.method === 'INVITE') {
      return { status: 415, reason: 'Unsupported Media Type', headers: { accept: 'application/sdp', 'accept-encoding': 'identity' } };
    }
  }
  const encoding = String((h['content-encoding'] as string | undefined) ?? '')
    .trim()
    .toLowerCase();
  if (encoding && encoding !== 'identity' && rq.method === 'INVITE') {
    return { status: 415, reason: 'Unsupported Content Encoding', headers: { accept: 'application/sdp', 'accept-encoding': 'identity' } };
  }
  if (rq.method === 'INVITE') {
    const contact = Array.isArray(h.contact) ? h.contact[0] : undefined;
    if (!contact || !sip.parseUri(String(typeof contact.uri === 'string' ? contact.uri : sip.stringifyUri(contact.uri)))) {
      return { status: 400, reason: 'Missing Or Bad Contact' };
    }
  }
  return null;
}
