// CIDR matching for allow-lists (a connection's inbound sources, carrier and edge lists), IPv4 and
// IPv6. Node's own BlockList does the prefix arithmetic; an IPv4 source seen on a dual-stack socket
// as `::ffff:a.b.c.d` is matched against IPv4 lists too.
import net from 'node:net';

interface ParsedCidr {
  address: string;
  family: 'ipv4' | 'ipv6';
  prefix: number;
}

/** `a.b.c.d[/n]` or `x:y::z[/n]`; a bare address is a single host (/32, /128). */
function parseCidr(cidr: string): ParsedCidr | null {
  const slash = cidr.indexOf('/');
  const address = slash === -1 ? cidr : cidr.slice(0, slash);
  const bits = slash === -1 ? null : cidr.slice(slash + 1);
  const version = net.isIP(address);
  if (version === 0) return null;
  const max = version === 4 ? 32 : 128;
  if (bits !== null && !/^\d{1,3}$/.test(bits)) return null;
  const prefix = bits === null ? max : Number(bits);
  if (prefix > max) return null;
  return { address, family: version === 4 ? 'ipv4' : 'ipv6', prefix };
}

/** The IPv4 address inside an IPv4-mapped IPv6 address, else the address itself. */
function unmapped(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && net.isIPv4(lower.slice(7)) ? lower.slice(7) : address;
}

export function isValidCidr(cidr: string): boolean {
  return parseCidr(cidr) !== null;
}

/** The CIDR with an explicit prefix (`/32` or `/128` for a bare address); null when it is not one. */
export function normalizeCidr(cidr: string): string | null {
  const p = parseCidr(cidr);
  return p && `${p.address}/${p.prefix}`;
}

export function cidrContains(cidr: string, address: string): boolean {
  const c = parseCidr(cidr);
  const a = unmapped(address);
  const version = net.isIP(a);
  if (!c || version === 0 || (version === 4 ? 'ipv4' : 'ipv6') !== c.family) return false;
  const list = new net.BlockList();
  list.addSubnet(c.address, c.prefix, c.family);
  return list.check(a, c.family);
}
