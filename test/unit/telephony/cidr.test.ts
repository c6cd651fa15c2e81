import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { cidrContains, isValidCidr, normalizeCidr } from '../../../src/telephony/cidr.js';

describe('CIDR allow-lists', () => {
  it('matches IPv4 prefixes, including /0 and a bare host', () => {
    expect(cidrContains('203.0.113.0/24', '203.0.113.77')).toBe(true);
    expect(cidrContains('203.0.113.0/24', '203.0.114.1')).toBe(false);
    expect(cidrContains('0.0.0.0/0', '198.51.100.9')).toBe(true);
    expect(cidrContains('198.51.100.9', '198.51.100.9')).toBe(true);
    expect(cidrContains('198.51.100.9', '198.51.100.10')).toBe(false);
  });

  it('matches IPv6 prefixes, compressed or not', () => {
    expect(cidrContains('2001:db8:10::/48', '2001:db8:10:ffff::1')).toBe(true);
    expect(cidrContains('2001:db8:10::/48', '2001:db8:11::1')).toBe(false);
    expect(cidrContains('2001:0db8:0010:0000:0000:0000:0000:0000/48', '2001:db8:10::5')).toBe(true);
    expect(cidrContains('::1', '::1')).toBe(true);
    expect(cidrContains('::/0', '2001:db8::1')).toBe(true);
  });

  it('matches an IPv4-mapped IPv6 source against IPv4 lists, never across families otherwise', () => {
    expect(cidrContains('203.0.113.0/24', '::ffff:203.0.113.5')).toBe(true);
    expect(cidrContains('203.0.113.0/24', '::FFFF:203.0.113.5')).toBe(true);
    expect(cidrContains('::/0', '203.0.113.5')).toBe(false);
    expect(cidrContains('0.0.0.0/0', '2001:db8::1')).toBe(false);
  });

  it('refuses what is not a CIDR, and never matches it', () => {
    for (const bad of [
      '',
      '203.0.113.0/33',
      '2001:db8::/129',
      '203.0.113.0/',
      '203.0.113.0/-1',
      '203.0.113/24',
      'example.com/24',
      '2001:db8::/4a',
      '1.2.3.4/24/1',
    ]) {
      expect(isValidCidr(bad), bad).toBe(false);
      expect(cidrContains(bad, '203.0.113.1'), bad).toBe(false);
    }
    expect(cidrContains('203.0.113.0/24', 'not-an-address')).toBe(false);
  });

  it('normalizes a bare address to a host prefix of its family', () => {
    expect(normalizeCidr('203.0.113.9')).toBe('203.0.113.9/32');
    expect(normalizeCidr('2001:db8::9')).toBe('2001:db8::9/128');
    expect(normalizeCidr('2001:db8::/32')).toBe('2001:db8::/32');
    expect(normalizeCidr('nope')).toBeNull();
  });

  it("agrees with Node's BlockList on random prefixes and addresses of both families", () => {
    let seed = 7;
    const rnd = (n: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), (seed >>> 8) % n);
    // An address as bytes, spelt the ways a source or a configured CIDR may be spelt.
    const spell = (bytes: number[]): string => {
      if (bytes.length === 4) return bytes.join('.');
      const words = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] ?? 0) << 8) | (bytes[2 * i + 1] ?? 0));
      if (rnd(4) === 0)
        return `${words
          .slice(0, 6)
          .map((w) => w.toString(16))
          .join(':')}:${bytes.slice(12).join('.')}`;
      const text = words.map((w) => w.toString(16)).join(':');
      return rnd(2) === 0 ? text.replace(/(^|:)0(:0)+(:|$)/, '::') : text;
    };
    for (let i = 0; i < 4000; i++) {
      const family = rnd(2) === 0 ? 'ipv4' : 'ipv6';
      const size = family === 'ipv4' ? 4 : 16;
      // Words of zeros are common in real IPv6 addresses (and exercise `::`).
      const base = Array.from({ length: size }, () => (rnd(3) === 0 ? 0 : rnd(256)));
      const prefix = rnd(size * 8 + 1);
      // The probe differs from the base in one bit: inside the prefix it must miss, past it match.
      const probe = [...base];
      const bit = rnd(size * 8);
      probe[bit >> 3] = (probe[bit >> 3] ?? 0) ^ (0x80 >> (bit & 7));
      const [cidrText, probeText] = [spell(base), spell(probe)];
      const list = new net.BlockList();
      list.addSubnet(cidrText, prefix, family);
      expect(cidrContains(`${cidrText}/${prefix}`, probeText), `${cidrText}/${prefix} ∋ ${probeText}`).toBe(list.check(probeText, family));
      expect(list.check(probeText, family)).toBe(bit >= prefix);
    }
  });
});
