// SSRF guard for endpoint URLs. HTTPS only; plain http only to loopback when the
// development setting allows it. Every address a host resolves to must be public unless configured:
// loopback (allowLoopback), private/link-local/CGNAT/ULA (allowPrivate). Cloud metadata addresses are
// refused always. The check runs at create/update and again before every attempt (DNS can change);
// the attempt then connects to the very address that was checked (see http-sender.ts).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface UrlPolicy {
  /** WEBHOOKS_ALLOW_LOOPBACK_HTTP: loopback destinations (http or https) are allowed. */
  allowLoopback: boolean;
  /** WEBHOOKS_ALLOW_PRIVATE_NETWORKS: private, link-local and shared (CGNAT) ranges are allowed. */
  allowPrivate: boolean;
}

export class UrlRefused extends Error {}

export interface ResolvedTarget {
  url: URL;
  /** The checked address the request must connect to. */
  address: string;
  family: 4 | 6;
}

const metadata = new BlockList();
metadata.addAddress('169.254.169.254');
metadata.addAddress('169.254.170.2'); // ECS task metadata
metadata.addAddress('fd00:ec2::254', 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8);
loopback.addAddress('::1', 'ipv6');

const privateRanges = new BlockList();
for (const [net, bits] of [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
] as const) {
  privateRanges.addSubnet(net, bits);
}
for (const [net, bits] of [
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  privateRanges.addSubnet(net, bits, 'ipv6');

// Never a unicast destination on the internet: "this network", multicast, reserved, documentation.
const unroutable = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  unroutable.addSubnet(net, bits);
}
for (const [net, bits] of [
  ['::', 128],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
  ['100::', 64],
] as const)
  unroutable.addSubnet(net, bits, 'ipv6');

export type AddressClass = 'public' | 'loopback' | 'private' | 'metadata' | 'unroutable';

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. */
function unmap(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m?.[1]) return { address: m[1], type: 'ipv4' };
  return { address, type: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function classifyAddress(raw: string): AddressClass {
  const { address, type } = unmap(raw);
  if (metadata.check(address, type)) return 'metadata';
  if (loopback.check(address, type)) return 'loopback';
  if (privateRanges.check(address, type)) return 'private';
  if (unroutable.check(address, type)) return 'unroutable';
  return 'public';
}

function allowed(cls: AddressClass, policy: UrlPolicy): boolean {
  return cls === 'public' || (cls === 'loopback' && policy.allowLoopback) || (cls === 'private' && policy.allowPrivate);
}

/** Checks the URL's form only (scheme, host, no credentials); throws UrlRefused with the reason. */
export function parseEndpointUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlRefused('url is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UrlRefused('url must use https');
  if (url.username || url.password) throw new UrlRefused('url must not carry credentials');
  if (!url.hostname) throw new UrlRefused('url has no host');
  return url;
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;
const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/**
 * Resolves the URL's host and checks every address against the policy; resolves with the first
 * (checked) address to connect to. Throws UrlRefused naming the reason.
 */
export async function resolveEndpointUrl(raw: string, policy: UrlPolicy, resolve: Resolver = systemResolver): Promise<ResolvedTarget> {
  const url = parseEndpointUrl(raw);
  if (url.protocol === 'http:' && !policy.allowLoopback) throw new UrlRefused('url must use https');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: { address: string; family: number }[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new UrlRefused(`url host '${host}' does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    if (addresses.length === 0) throw new UrlRefused(`url host '${host}' does not resolve`);
  }
  for (const a of addresses) {
    const cls = classifyAddress(a.address);
    if (!allowed(cls, policy)) throw new UrlRefused(`url host '${host}' resolves to a ${cls} address (${a.address}), which is not allowed`);
  }
  if (url.protocol === 'http:') {
    const allLoopback = addresses.every((a) => classifyAddress(a.address) === 'loopback');
    if (!(policy.allowLoopback && allLoopback)) {
      throw new UrlRefused(policy.allowLoopback ? 'url must use https (plain http is allowed to loopback only)' : 'url must use https');
    }
  }
  const first = addresses[0];
  if (!first) throw new UrlRefused(`url host '${host}' does not resolve`); // checked above; kept for the type
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
