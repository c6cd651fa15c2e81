// Edge validation of parsed SIP requests (src/telephony/sip/validate.ts): each defect gets the
// final response RFC 3261 names for it, and a well-formed INVITE passes.
import { describe, expect, it } from 'vitest';
import sip, { type SipRequest } from 'sip';
import { validateRequest } from '../../../src/telephony/sip/validate.js';

const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n';

function invite(extra: Record<string, string> = {}, opts: { method?: string; cseqMethod?: string; body?: string } = {}): SipRequest {
  const method = opts.method ?? 'INVITE';
  const body = opts.body ?? (method === 'INVITE' ? SDP : '');
  const headers: Record<string, string> = {
    Via: 'SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-1',
    'Max-Forwards': '70',
    From: '<sip:alice@127.0.0.1>;tag=1',
    To: '<sip:+14155550100@127.0.0.1>',
    'Call-ID': 'call-1@127.0.0.1',
    CSeq: `1 ${opts.cseqMethod ?? method}`,
    Contact: '<sip:alice@127.0.0.1:5070>',
    ...(body ? { 'Content-Type': 'application/sdp' } : {}),
    ...extra,
  };
  const text = `${method} sip:+14155550100@127.0.0.1 SIP/2.0\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const parsed = sip.parse(text) as SipRequest | undefined;
  if (!parsed) throw new Error('the sip parser refused the test message');
  return parsed;
}

describe('validateRequest', () => {
  it('accepts a well-formed INVITE with SDP', () => {
    expect(validateRequest(invite())).toBeNull();
  });

  it('answers a CSeq method that differs from the request method with 400 (§8.1.1.5)', () => {
    expect(validateRequest(invite({}, { cseqMethod: 'BYE' }))).toMatchObject({ status: 400, reason: 'CSeq Method Mismatch' });
  });

  it('answers Max-Forwards 0 with 483, except for OPTIONS', () => {
    expect(validateRequest(invite({ 'Max-Forwards': '0' }))).toMatchObject({ status: 483 });
    expect(validateRequest(invite({ 'Max-Forwards': '0' }, { method: 'OPTIONS' }))).toBeNull();
  });

  it('refuses an unknown Require option tag with 420 naming it in Unsupported', () => {
    expect(validateRequest(invite({ Require: '100rel, foo' }))).toEqual({ status: 420, reason: 'Bad Extension', headers: { unsupported: '100rel, foo' } });
  });

  it('refuses a body that is not SDP with 415 and Accept: application/sdp', () => {
    const problem = validateRequest(invite({ 'Content-Type': 'text/plain' }));
    expect(problem).toMatchObject({ status: 415, headers: { accept: 'application/sdp' } });
  });

  it('refuses a compressed body with 415', () => {
    expect(validateRequest(invite({ 'Content-Encoding': 'gzip' }))).toMatchObject({ status: 415, reason: 'Unsupported Content Encoding' });
  });

  it('accepts a tel: URI in From and refuses a From that is no URI at all', () => {
    expect(validateRequest(invite({ From: '<tel:+14155550101>;tag=1' }))).toBeNull();
    expect(validateRequest(invite({ From: '<not a uri>;tag=1' }))).toMatchObject({ status: 400 });
  });

  it('refuses an INVITE without Contact', () => {
    const rq = invite();
    delete rq.headers.contact;
    expect(validateRequest(rq)).toMatchObject({ status: 400, reason: 'Missing Or Bad Contact' });
  });
});
