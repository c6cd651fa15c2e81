// RTP source validation: the signalled source always wins, NAT latching only early,
// same family, same address unless the SDP address is private; strays ignored.
import { describe, expect, it } from 'vitest';
import { SourceLatch, NAT_WINDOW_PACKETS, isPrivateAddress } from '../../../src/telephony/rtp/source-latch.js';

describe('SourceLatch', () => {
  it("'signalled' accepts only the SDP address:port", () => {
    const l = new SourceLatch('signalled');
    l.signal('203.0.113.5', 4000);
    expect(l.accept('203.0.113.5', 4002)).toBe('ignore');
    expect(l.accept('198.51.100.9', 4000)).toBe('ignore');
    expect(l.latched).toBeNull();
    expect(l.accept('203.0.113.5', 4000)).toBe('latched');
    expect(l.accept('203.0.113.5', 4000)).toBe('accept');
    expect(l.latched).toEqual({ address: '203.0.113.5', port: 4000 });
  });

  it("'nat' latches a rewritten port of the SDP address, and the signalled source takes over when it shows up", () => {
    const l = new SourceLatch('nat');
    l.signal('203.0.113.5', 4000);
    expect(l.accept('203.0.113.5', 61000)).toBe('latched');
    expect(l.accept('203.0.113.5', 61000)).toBe('accept');
    expect(l.accept('203.0.113.5', 62000)).toBe('ignore'); // a second guess is a stray
    expect(l.accept('203.0.113.5', 4000)).toBe('latched');
    expect(l.accept('203.0.113.5', 61000)).toBe('ignore'); // the NAT guess lost for good
  });

  it("'nat' refuses another address when the SDP address is public (a third party cannot hijack)", () => {
    const l = new SourceLatch('nat');
    l.signal('203.0.113.5', 4000);
    expect(l.accept('198.51.100.66', 4000)).toBe('ignore');
    expect(l.latched).toBeNull();
  });

  it("'nat' takes any address of the same family when the SDP address is private, only in the first packets", () => {
    const l = new SourceLatch('nat');
    l.signal('192.168.1.20', 4000);
    expect(l.accept('2001:db8::1', 5000)).toBe('ignore'); // other family
    expect(l.accept('198.51.100.7', 33000)).toBe('latched');

    const late = new SourceLatch('nat');
    late.signal('10.0.0.8', 4000);
    for (let i = 0; i < NAT_WINDOW_PACKETS; i++) late.accept('::1', 1);
    expect(late.accept('198.51.100.7', 33000)).toBe('ignore'); // past the window
  });

  it('starts over on a new remote description', () => {
    const l = new SourceLatch('signalled');
    l.signal('203.0.113.5', 4000);
    l.accept('203.0.113.5', 4000);
    l.signal('203.0.113.6', 5000);
    expect(l.latched).toBeNull();
    expect(l.accept('203.0.113.5', 4000)).toBe('ignore');
    expect(l.accept('203.0.113.6', 5000)).toBe('latched');
  });

  it('knows private ranges', () => {
    for (const a of ['10.1.2.3', '172.16.0.1', '172.31.255.1', '192.168.0.1', '100.64.0.1', '169.254.1.1', 'fd00::1', 'fe80::1'])
      expect(isPrivateAddress(a)).toBe(true);
    for (const a of ['172.32.0.1', '8.8.8.8', '127.0.0.1', '2001:db8::1', '100.128.0.1']) expect(isPrivateAddress(a)).toBe(false);
  });
});
