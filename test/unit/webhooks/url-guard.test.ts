// The SSRF guard: which resolved addresses an endpoint URL may reach, and when plain http is allowed.
import { describe, expect, it } from 'vitest';
import { classifyAddress, resolveEndpointUrl, UrlRefused, type UrlPolicy } from '../../../src/webhooks/index.js';

const STRICT: UrlPolicy = { allowLoopback: false, allowPrivate: false };
const DEV: UrlPolicy = { allowLoopback: true, allowPrivate: false };
const resolvesTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.5.5.5', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.10.10', 'private'],
    ['fe80::1', 'private'],
    ['fd12::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['0.0.0.0', 'unroutable'],
    ['224.0.0.1', 'unroutable'],
    ['::', 'unroutable'],
    ['ff02::1', 'unroutable'],
    ['93.184.216.34', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['8.8.8.8', 'public'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });
});

describe('resolveEndpointUrl', () => {
  it('accepts https to a public address and pins the resolved address', async () => {
    const t = await resolveEndpointUrl('https://hooks.example.com/in', STRICT, resolvesTo('93.184.216.34'));
    expect(t.address).toBe('93.184.216.34');
    expect(t.url.hostname).toBe('hooks.example.com');
  });

  it('refuses plain http to a public host, even in development', async () => {
    await expect(resolveEndpointUrl('http://hooks.example.com/in', DEV, resolvesTo('93.184.216.34'))).rejects.toThrow(/https/);
  });

  it('refuses loopback unless the development setting allows it, then allows http to it', async () => {
    await expect(resolveEndpointUrl('https://127.0.0.1/x', STRICT)).rejects.toThrow(/loopback/);
    await expect(resolveEndpointUrl('http://localhost:9/x', STRICT, resolvesTo('127.0.0.1'))).rejects.toThrow(UrlRefused);
    expect((await resolveEndpointUrl('http://localhost:9/x', DEV, resolvesTo('127.0.0.1', '::1'))).address).toBe('127.0.0.1');
  });

  it('refuses a host when any of its addresses is private, link-local or metadata', async () => {
    await expect(resolveEndpointUrl('https://a.example/x', STRICT, resolvesTo('93.184.216.34', '10.0.0.5'))).rejects.toThrow(/private/);
    await expect(resolveEndpointUrl('https://169.254.169.254/latest/meta-data', { allowLoopback: true, allowPrivate: true })).rejects.toThrow(/metadata/);
    await expect(resolveEndpointUrl('https://[fe80::1]/x', STRICT)).rejects.toThrow(/private/);
    expect((await resolveEndpointUrl('https://10.0.0.5/x', { allowLoopback: false, allowPrivate: true })).address).toBe('10.0.0.5');
  });

  it('refuses other schemes, credentials in the URL and hosts that do not resolve', async () => {
    await expect(resolveEndpointUrl('ftp://a.example/x', DEV)).rejects.toThrow(/https/);
    await expect(resolveEndpointUrl('https://u:p@a.example/x', DEV, resolvesTo('93.184.216.34'))).rejects.toThrow(/credentials/);
    await expect(resolveEndpointUrl('not a url', DEV)).rejects.toThrow(/valid/);
    await expect(
      resolveEndpointUrl('https://nx.invalid/x', DEV, async () => {
        throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
      }),
    ).rejects.toThrow(/does not resolve/);
  });
});
