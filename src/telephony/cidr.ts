// IPv4 CIDR matching for a connection's inbound allow-list.
import net from 'node:net';

function ipv4ToInt(ip: string): number | null {
  const v = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
  if (!net.isIPv4(v)) return null;
  return v.split('.').reduce((acc, o) => ((acc << 8) | Number(o)) >>> 0, 0);
}

export function isValidCidr(cidr: string): boolean {
  const [ip = '', bits = '32'] = cidr.split('/');
  return ipv4ToInt(ip) !== null && /^\d+$/.test(bits) && Number(bits) <= 32;
}

export function cidrContains(cidr: string, address: string): boolean {
  const [ip = '', bitsRaw = '32'] = cidr.split('/');
  const base = ipv4ToInt(ip);
  const addr = ipv4ToInt(address);
  const bits = Number(bitsRaw);
  if (base === null || addr === null || !(bits >= 0 && bits <= 32)) return false;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (base & mask) >>> 0 === (addr & mask) >>> 0;
}
