import { describe, it, expect } from 'vitest';
import type { SipRequest } from 'sip';
import { contactFor, requestIsSips, targetIsSips } from '../../../src/telephony/sip/secure-transport.js';

const request = (uri: string, o: { contact?: string; recordRoute?: string } = {}): SipRequest =>
  ({
    method: 'INVITE',
    uri,
    headers: {
      ...(o.contact ? { contact: [{ uri: o.contact, params: {} }] } : {}),
      ...(o.recordRoute ? { 'record-route': [{ uri: o.recordRoute, params: {} }] } : {}),
    },
  }) as unknown as SipRequest;

describe('our Contact over TLS', () => {
  it('is sip:…;transport=tls on the TLS port unless the dialog is secure, then sips:', () => {
    expect(contactFor('tls', '192.0.2.1', 5060, 5061).uri).toBe('sip:voxbridge@192.0.2.1:5061;transport=tls');
    expect(contactFor('tls', '192.0.2.1', 5060, 5061, true).uri).toBe('sips:voxbridge@192.0.2.1:5061');
    expect(contactFor('tcp', '192.0.2.1', 5060, 5061, true).uri).toBe('sip:voxbridge@192.0.2.1:5060;transport=tcp');
    expect(contactFor('udp', '192.0.2.1', 5060, null).uri).toBe('sip:voxbridge@192.0.2.1:5060');
  });
});

describe('requestIsSips (RFC 3261 §8.1.1.8)', () => {
  it('looks at the Request-URI, then the top Record-Route, else the Contact', () => {
    expect(requestIsSips(request('sips:+15550100@192.0.2.1'))).toBe(true);
    expect(requestIsSips(request('sip:+15550100@192.0.2.1'))).toBe(false);
    expect(requestIsSips(request('sip:+15550100@192.0.2.1', { contact: 'sips:pbx@198.51.100.7' }))).toBe(true);
    // With a Record-Route the Contact does not count: the proxy's URI does.
    expect(requestIsSips(request('sip:+15550100@192.0.2.1', { contact: 'sips:pbx@198.51.100.7', recordRoute: 'sip:edge@203.0.113.1;lr' }))).toBe(false);
    expect(requestIsSips(request('sip:+15550100@192.0.2.1', { recordRoute: 'sips:edge@203.0.113.1;lr' }))).toBe(true);
  });

  it('targetIsSips reads a URI string', () => {
    expect(targetIsSips('sips:bob@10.0.0.1:5061')).toBe(true);
    expect(targetIsSips('sip:bob@10.0.0.1:5061;transport=tls')).toBe(false);
  });
});
