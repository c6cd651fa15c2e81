// Media sockets answer IP-literal lookups at once (no deferred send per packet), still resolve host
// names through DNS, and deliver a burst of packets sent in one synchronous loop whole and in order (a burst the
// receiver's default kernel buffer holds: 50 packets, 1 s of a leg's audio in 20 ms packets).
import { describe, it, expect, afterEach } from 'vitest';
import dgram from 'node:dgram';
import { createMediaSocket } from '../../../src/telephony/rtp/port-allocator.js';
import { literalLookup } from '../../../src/telephony/rtp/literal-lookup.js';

const sockets: dgram.Socket[] = [];
afterEach(() => {
  sockets.splice(0).forEach((s) => s.close());
});

async function bound(s: dgram.Socket): Promise<dgram.Socket> {
  sockets.push(s);
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

type Answer = { err: unknown; address: string; family: number };
function lookup(fn: ReturnType<typeof literalLookup>, host: string): { sync: Answer | null; done: Promise<Answer> } {
  let sync: Answer | null = null;
  let inCall = true;
  const done = new Promise<Answer>((resolve) => {
    fn(host, 4 as never, (err, address, family) => {
      const a = { err, address, family };
      if (inCall) sync = a;
      resolve(a);
    });
  });
  inCall = false;
  return { sync, done };
}

describe('media socket address lookup', () => {
  it('answers IPv4 and IPv6 literals synchronously, the same address again from its cache', async () => {
    const fn = literalLookup();
    expect(lookup(fn, '127.0.0.1').sync).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    expect(lookup(fn, '127.0.0.1').sync).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    expect(lookup(fn, '192.0.2.7').sync).toEqual({ err: null, address: '192.0.2.7', family: 4 });
    expect(lookup(fn, '::1').sync).toEqual({ err: null, address: '::1', family: 6 });
  });

  it('resolves a host name through dns.lookup (asynchronously), then answers literals at once again', async () => {
    const fn = literalLookup();
    const name = lookup(fn, 'localhost');
    expect(name.sync).toBeNull();
    const a = await name.done;
    expect(a.err).toBeNull();
    expect(a.address).toBe('127.0.0.1');
    // A name is never cached as a literal: a literal after it still answers at once.
    expect(lookup(fn, '127.0.0.1').sync?.address).toBe('127.0.0.1');
  });

  it('delivers 50 packets sent in one synchronous loop, all of them, in order', async () => {
    const tx = await bound(createMediaSocket());
    const rx = await bound(dgram.createSocket('udp4'));
    const got: number[] = [];
    const all = new Promise<void>((resolve) => {
      rx.on('message', (m) => {
        got.push(m.readUInt32BE(0));
        if (got.length === 50) resolve();
      });
    });
    const port = rx.address().port;
    for (let i = 0; i < 50; i++) {
      const b = Buffer.alloc(172);
      b.writeUInt32BE(i, 0);
      tx.send(b, port, '127.0.0.1');
    }
    await all;
    expect(got).toEqual([...Array(50).keys()]);
  });
});
