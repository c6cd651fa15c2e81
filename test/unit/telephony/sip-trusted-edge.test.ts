import { describe, expect, it } from 'vitest';
import type { Remote, SipRequest } from 'sip';
import { TrustedEdge } from '../../../src/telephony/sip/trusted-edge.js';

const rq = (headers: Record<string, unknown> = {}): SipRequest =>
  ({ method: 'INVITE', uri: 'sip:+15550001111@gw', headers: { 'call-id': 'c1', ...headers } }) as unknown as SipRequest;
const from = (address: string): Remote => ({ protocol: 'UDP', address, port: 5060 });
const never = () => false;

describe('TrustedEdge', () => {
  const edge = new TrustedEdge({ cidrs: ['10.0.0.5', '192.0.2.0/28'], sourceHeader: 'X-VB-Source' });

  it('takes every source as it is when no edge is configured', () => {
    const none = new TrustedEdge({ cidrs: [], sourceHeader: 'X-VB-Source' });
    expect(none.enabled).toBe(false);
    expect(none.classify(rq({ 'x-vb-source': '203.0.113.9' }), from('198.51.100.1'), never)).toEqual({ kind: 'direct' });
  });

  it("uses the edge's header for the caller's address, only on requests from the edge", () => {
    expect(edge.classify(rq({ 'x-vb-source': '203.0.113.9' }), from('10.0.0.5'), never)).toEqual({ kind: 'edge', source: '203.0.113.9' });
    expect(edge.classify(rq({ 'x-vb-source': '2001:db8::7' }), from('192.0.2.14'), never)).toEqual({ kind: 'edge', source: '2001:db8::7' });
    // A forged header from anyone else is never read: the request is refused.
    expect(edge.classify(rq({ 'x-vb-source': '10.0.0.5' }), from('203.0.113.9'), never)).toEqual({ kind: 'refuse' });
    expect(edge.classify(rq(), from('192.0.2.16'), never)).toEqual({ kind: 'refuse' });
  });

  it('believes the last value when the header repeats (the edge appends its own after a forged one)', () => {
    expect(edge.classify(rq({ 'x-vb-source': '10.9.9.9,203.0.113.9' }), from('10.0.0.5'), never)).toEqual({ kind: 'edge', source: '203.0.113.9' });
  });

  it("falls back to the edge's address when the header is absent or not an address (the edge's own probes)", () => {
    expect(edge.classify(rq(), from('10.0.0.5'), never)).toEqual({ kind: 'edge', source: '10.0.0.5' });
    expect(edge.classify(rq({ 'x-vb-source': 'evil.example' }), from('10.0.0.5'), never)).toEqual({ kind: 'edge', source: '10.0.0.5' });
  });

  it('takes in-dialog requests of calls we dialled out directly from the far end', () => {
    expect(edge.classify(rq(), from('198.51.100.1'), () => true)).toEqual({ kind: 'direct' });
  });

  it('refuses a configuration that names no address', () => {
    expect(() => new TrustedEdge({ cidrs: ['kamailio.local'], sourceHeader: 'X-VB-Source' })).toThrow(/invalid trusted edge address/);
  });
});

describe('TrustedEdge: the caller’s TLS hop as the edge vouches for it', () => {
  const edge = new TrustedEdge({ cidrs: ['10.0.0.5'], sourceHeader: 'X-VB-Source' });
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  const b64 = Buffer.from(pem).toString('base64');

  it('says nothing about TLS when the caller did not reach the edge over TLS', () => {
    const v = edge.classify(rq({ 'x-vb-source': '203.0.113.9', 'x-vb-client-cert': b64 }), from('10.0.0.5'), never);
    expect(v).toEqual({ kind: 'edge', source: '203.0.113.9' });
    expect('tls' in v).toBe(false);
  });

  it('passes on a certificate the edge verified, and marks a TLS caller without one as unverified', () => {
    const withCert = edge.classify(rq({ 'x-vb-source': '203.0.113.9', 'x-vb-transport': 'tls', 'x-vb-client-cert': b64 }), from('10.0.0.5'), never);
    expect(withCert).toMatchObject({ kind: 'edge', tls: { authorized: true } });
    expect(withCert.kind === 'edge' && withCert.tls?.peerCertificate?.toString()).toBe(pem);
    const without = edge.classify(rq({ 'x-vb-source': '203.0.113.9', 'x-vb-transport': 'TLS' }), from('10.0.0.5'), never);
    expect(without).toMatchObject({ kind: 'edge', tls: { authorized: false } });
    expect(without.kind === 'edge' && without.tls?.peerCertificate).toBeUndefined();
  });

  it('does not take a certificate header that is not base64 or too long', () => {
    for (const bad of ['not base64!', 'A'.repeat(9000)]) {
      const v = edge.classify(rq({ 'x-vb-transport': 'tls', 'x-vb-client-cert': bad }), from('10.0.0.5'), never);
      expect(v).toMatchObject({ kind: 'edge', tls: { authorized: false, authorizationError: 'unreadable client certificate from the edge' } });
    }
  });

  it('takes the edge’s word that it terminates the caller’s SRTP, over TLS only', () => {
    const viaTls = edge.classify(rq({ 'x-vb-source': '203.0.113.9', 'x-vb-transport': 'tls', 'x-vb-media': 'srtp' }), from('10.0.0.5'), never);
    expect(viaTls).toMatchObject({ kind: 'edge', srtp: true });
    // Keys in clear signalling protect nothing: without TLS to the edge the header means nothing.
    const clear = edge.classify(rq({ 'x-vb-source': '203.0.113.9', 'x-vb-media': 'srtp' }), from('10.0.0.5'), never);
    expect(clear).toEqual({ kind: 'edge', source: '203.0.113.9' });
    expect(edge.classify(rq({ 'x-vb-transport': 'tls', 'x-vb-media': 'rtp' }), from('10.0.0.5'), never)).not.toHaveProperty('srtp');
  });

  it('never reads these headers from anyone but the edge', () => {
    expect(edge.classify(rq({ 'x-vb-transport': 'tls', 'x-vb-client-cert': b64 }), from('203.0.113.9'), never)).toEqual({ kind: 'refuse' });
    expect(edge.classify(rq({ 'x-vb-transport': 'tls', 'x-vb-media': 'srtp' }), from('203.0.113.9'), () => true)).toEqual({ kind: 'direct' });
    expect(edge.classify(rq({ 'x-vb-transport': 'tls', 'x-vb-client-cert': b64 }), from('203.0.113.9'), () => true)).toEqual({ kind: 'direct' });
  });
});
