// CIDR matching for allow-lists (a connection's inbound sources, carrier and edge lists), IPv4 and
// IPv6; an IPv4 source seen on a dual-stack socket as `::ffff:a.b.c.d` is matched against IPv4 lists
// too. Every SIP request is checked against these lists, so a CIDR is parsed once into 16-bit words
// and matched with plain arithmetic: a BlockList built per check cost ~40 µs (two of them per call
// setup), most of it in the SocketAddress objects Node creates for it.
import net from 'node:net';

interface ParsedCidr {
  address: string;
  family: 'ipv4' | 'ipv6';
  prefix: number;
}

interface CompiledCidr {
  family: 'ipv4' | 'ipv6';
  prefix: number;
  /** The address as 16-bit words (2 for IPv4, 8 for IPv6). */
  words: number[];
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

/** An address already known to be a literal of its family, as 16-bit words (2 for IPv4, 8 for IPv6). */
function addressWords(address: string, family: 'ipv4' | 'ipv6'): number[] {
  if (family === 'ipv4') {
    const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
    return [(a << 8) | b, (c << 8) | d];
  }
  const zone = address.indexOf('%');
  let text = zone === -1 ? address : address.slice(0, zone);
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // An embedded IPv4 tail (`64:ff9b::192.0.2.1`) is the last two words.
    const [hi = 0, lo = 0] = addressWords(text.slice(lastColon + 1), 'ipv4');
    text = `${text.slice(0, lastColon + 1)}${hi.toString(16)}:${lo.toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const group = (part: string): number[] => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const left = group(head);
  const right = rest === undefined ? [] : group(rest);
  return [...left, ...new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0), ...right];
}

// CIDR strings come from configuration and connection rows: a small set, kept while it stays one.
const compiled = new Map<string, CompiledCidr | null>();
const MAX_COMPILED = 10_000;

function compile(cidr: string): CompiledCidr | null {
  let c = compiled.get(cidr);
  if (c !== undefined) return c;
  const p = parseCidr(cidr);
  c = p && { family: p.family, prefix: p.prefix, words: addressWords(p.address, p.family) };
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(cidr, c);
  return c;
}

export function cidrContains(cidr: string, address: string): boolean {
  const c = compile(cidr);
  const a = unmapped(address);
  if (!c || (c.family === 'ipv4' ? !net.isIPv4(a) : !net.isIPv6(a))) return false;
  const words = addressWords(a, c.family);
  let bits = c.prefix;
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if (((words[i] ?? 0) & mask) !== ((c.words[i] ?? 0) & mask)) return false;
  }
  return true;
}
