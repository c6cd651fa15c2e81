// Secure-trunk rules without sockets: what an offer says about SRTP, what we refuse without
// rtpengine, the per-connection demands (TLS, SRTP, client certificate), target transports.
import { describe, it, expect, beforeAll } from 'vitest';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { checkInboundSecurity, checkOfferSecurity, clientCertProblem, mediaSecurityOf } from '../../../src/telephony/secure-trunk.js';
import { transportOfTarget, contactFor } from '../../../src/telephony/sip/secure-transport.js';
import { SipError } from '../../../src/telephony/sip/errors.js';
import { makeTestPki, type TestPki } from '../../helpers/tls-certs.js';
import type { ConnectionRecord } from '../../../src/store/telephony-repo.js';

const sdp = (proto: string, extra = '') =>
  `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 ${proto} 0\r\na=rtpmap:0 PCMU/8000\r\n${extra}`;
const CRYPTO = 'a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\n';
const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof SipError) return `${e.status} ${e.reason}`;
    throw e;
  }
  return 'accepted';
};

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});

const conn = (o: Partial<ConnectionRecord>): ConnectionRecord => ({
  id: 'pcon_x',
  org_id: 'org_x',
  provider: 'carrier_a',
  host: 'h',
  port: 5061,
  transport: 'tls',
  username: null,
  password_enc: null,
  inbound_cidrs: [],
  status: 'active',
  credentials_valid: true,
  rtp_latching: 'nat',
  require_secure: false,
  require_client_cert: false,
  tls_client_ca: null,
  tls_client_subject: null,
  created_at: new Date(),
  updated_at: new Date(),
  ...o,
});

describe('offer security', () => {
  it('reads the first audio stream only', () => {
    expect(mediaSecurityOf(sdp('RTP/AVP'))).toEqual({ protocol: 'RTP/AVP', sdes: false, secureProfile: false });
    expect(mediaSecurityOf(sdp('RTP/SAVP', CRYPTO))).toEqual({ protocol: 'RTP/SAVP', sdes: true, secureProfile: true });
    expect(mediaSecurityOf(sdp('RTP/SAVP'))).toMatchObject({ sdes: false, secureProfile: true });
    expect(mediaSecurityOf(sdp('UDP/TLS/RTP/SAVPF'))).toMatchObject({ sdes: false, secureProfile: true });
    expect(mediaSecurityOf(`${sdp('RTP/AVP')}m=video 5000 RTP/SAVP 96\r\n${CRYPTO}`)).toMatchObject({ sdes: false, secureProfile: false });
  });

  it('refuses SRTP offers it cannot answer with 488 and a reason', () => {
    expect(refusal(() => checkOfferSecurity(sdp('RTP/AVP'), false))).toBe('accepted');
    expect(refusal(() => checkOfferSecurity(sdp('RTP/SAVP', CRYPTO), false))).toBe('488 Not Acceptable Here (SRTP not available)');
    expect(refusal(() => checkOfferSecurity(sdp('RTP/SAVP', CRYPTO), true))).toBe('accepted');
    expect(refusal(() => checkOfferSecurity(sdp('UDP/TLS/RTP/SAVP'), true))).toBe('488 Not Acceptable Here (SRTP needs SDES a=crypto)');
  });
});

describe('connection demands', () => {
  const tls = { protocol: 'TLS', address: '127.0.0.1', port: 1 };
  it('requires TLS, then SRTP, for a secure connection', () => {
    const c = conn({ require_secure: true });
    expect(refusal(() => checkInboundSecurity(c, { ...tls, protocol: 'UDP' }, sdp('RTP/SAVP', CRYPTO)))).toBe('403 Forbidden (TLS Required)');
    expect(refusal(() => checkInboundSecurity(c, tls, sdp('RTP/AVP')))).toBe('488 Not Acceptable Here (SRTP Required)');
    expect(refusal(() => checkInboundSecurity(c, tls, null))).toBe('488 Not Acceptable Here (SRTP Required, no offer)');
    expect(refusal(() => checkInboundSecurity(c, tls, sdp('RTP/SAVP', CRYPTO)))).toBe('accepted');
    expect(refusal(() => checkInboundSecurity(conn({}), { ...tls, protocol: 'UDP' }, sdp('RTP/AVP')))).toBe('accepted');
  });

  it('checks the client certificate against the connection CA and subject', () => {
    const raw = (file: string) => new X509Certificate(readFileSync(file)).raw;
    const ca = readFileSync(pki.caFile, 'utf8');
    const good = { authorized: false, peerCertificate: raw(pki.clientCert) };
    expect(clientCertProblem({ tls_client_ca: ca, tls_client_subject: 'carrier.test' }, good)).toBeNull();
    expect(clientCertProblem({ tls_client_ca: ca, tls_client_subject: 'other.test' }, good)).toBe('Subject Mismatch');
    expect(clientCertProblem({ tls_client_ca: ca, tls_client_subject: null }, { authorized: false, peerCertificate: raw(pki.rogueCert) })).toBe('Not Trusted');
    expect(clientCertProblem({ tls_client_ca: null, tls_client_subject: null }, good)).toBe('Not Trusted');
    expect(clientCertProblem({ tls_client_ca: null, tls_client_subject: null }, { ...good, authorized: true })).toBeNull();
    expect(clientCertProblem({ tls_client_ca: ca, tls_client_subject: null }, { authorized: false })).toBe('Required');
  });

  it('behind a trusted edge, takes the caller’s TLS hop to the edge (remote.tls) for its own', () => {
    const c = conn({ require_client_cert: true, tls_client_ca: readFileSync(pki.caFile, 'utf8'), tls_client_subject: 'carrier.test' });
    const viaEdge = { protocol: 'UDP', address: '203.0.113.9', port: 5060 };
    // The edge's certificate header: the PEM, as Kamailio's $tls_peer_raw_cert gives it.
    const pem = readFileSync(pki.clientCert);
    expect(refusal(() => checkInboundSecurity(c, { ...viaEdge, tls: { authorized: true, peerCertificate: pem } }, sdp('RTP/AVP')))).toBe('accepted');
    expect(refusal(() => checkInboundSecurity(c, { ...viaEdge, tls: { authorized: false } }, sdp('RTP/AVP')))).toBe(
      '403 Forbidden (Client Certificate Required)',
    );
    expect(refusal(() => checkInboundSecurity(c, viaEdge, sdp('RTP/AVP')))).toBe('403 Forbidden (TLS Client Certificate Required)');
  });

  it('behind a trusted edge that terminates SRTP, a secure connection takes the edge’s word for the caller’s SRTP', () => {
    const c = conn({ require_secure: true });
    const viaEdge = { protocol: 'UDP', address: '203.0.113.9', port: 5060, tls: { authorized: false } };
    // The node sees the edge's RTP/AVP; the caller's SRTP to the edge is what the edge says it terminated.
    expect(refusal(() => checkInboundSecurity(c, { ...viaEdge, edgeSrtp: true }, sdp('RTP/AVP')))).toBe('accepted');
    expect(refusal(() => checkInboundSecurity(c, viaEdge, sdp('RTP/AVP')))).toBe('488 Not Acceptable Here (SRTP Required)');
    const { tls: _tls, ...plain } = viaEdge;
    expect(refusal(() => checkInboundSecurity(c, { ...plain, edgeSrtp: true }, sdp('RTP/AVP')))).toBe('403 Forbidden (TLS Required)');
  });
});

describe('transports of targets', () => {
  it('sips: and ;transport=tls mean TLS; the Contact over TLS names the TLS port, sips: only for a secure dialog', () => {
    expect(transportOfTarget('sips:a@b', 'udp')).toBe('tls');
    expect(transportOfTarget('sip:a@b;transport=TLS', 'udp')).toBe('tls');
    expect(transportOfTarget('sip:a@b;transport=tcp', 'udp')).toBe('tcp');
    expect(transportOfTarget('sip:a@b', 'tls')).toBe('tls');
    expect(contactFor('tls', '192.0.2.1', 5060, 5061).uri).toBe('sip:voxbridge@192.0.2.1:5061;transport=tls');
    expect(contactFor('tls', '192.0.2.1', 5060, 5061, true).uri).toBe('sips:voxbridge@192.0.2.1:5061');
    expect(contactFor('tcp', '192.0.2.1', 5060, 5061).uri).toBe('sip:voxbridge@192.0.2.1:5060;transport=tcp');
  });
});
