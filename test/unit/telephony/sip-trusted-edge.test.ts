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
