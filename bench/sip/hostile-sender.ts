// A hostile SIP source in its own process (its CPU is not the gateway's): sends a mix of hostile
// datagrams and TCP garbage to the gateway's SIP port at a paced rate, then reports what it sent.
// argv: <sip port> <messages per second> <seconds>. Over IPC: {ready} once loaded, waits for {go}
// (so start-up is outside the measured window), then answers {udp, tcp, seconds}.
// Mix: 4 of 5 messages over UDP (a 65 KB "\r\n " run, bad Content-Length, SIP/7.0, 1200 bytes of
// garbage, a request without Call-ID), 1 of 5 over TCP (Content-Length: abc, an endless header line,
// binary garbage) on a pool of connections the gateway closes and the sender reopens.
import dgram from 'node:dgram';
import net from 'node:net';
import { defined } from '../defined.js';

const [port, rate, seconds] = process.argv.slice(2).map(Number) as [number, number, number];
const head = (extra: string, version = 'SIP/2.0') =>
  `OPTIONS sip:x@127.0.0.1 ${version}\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKh${Math.random().toString(36).slice(2)}\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@127.0.0.1>\r\nCall-ID: hostile\r\nCSeq: 1 OPTIONS\r\n${extra}\r\n`;
const datagrams = [
  Buffer.from('\r\n '.repeat(21_666), 'latin1'),
  Buffer.from(head('Content-Length: abc\r\n')),
  Buffer.from(head('Content-Length: 0\r\n', 'SIP/7.0')),
  Buffer.alloc(1200, 0x41),
  Buffer.from(head('Content-Length: 0\r\n').replace('Call-ID: hostile\r\n', '')),
];
const streamJunk = [
  Buffer.from(head('Content-Length: abc\r\n')),
  Buffer.from(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nX-Long: ${'a'.repeat(9000)}`),
  Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 37) & 0xff)),
];

const udp = dgram.createSocket('udp4');
// Stay under the gateway's per-source connection cap (32): beyond it connections are refused at accept.
const POOL = 16;
const pool: (net.Socket | null)[] = new Array<net.Socket | null>(POOL).fill(null);
const conn = (i: number): net.Socket => {
  const cur = pool[i];
  if (cur && !cur.destroyed) return cur;
  const s = net.connect(port, '127.0.0.1');
  s.on('error', () => {});
  s.on('close', () => {
    if (pool[i] === s) pool[i] = null;
  });
  s.on('data', () => {});
  pool[i] = s;
  return s;
};

await new Promise<void>((resolve) => {
  process.once('message', () => resolve());
  process.send?.({ ready: true });
});

let sentUdp = 0;
let sentTcp = 0;
let n = 0;
const start = performance.now();
const end = start + seconds * 1000;
await new Promise<void>((resolve) => {
  const timer = setInterval(() => {
    const now = performance.now();
    const due = Math.floor(((Math.min(now, end) - start) / 1000) * rate);
    for (; n < due; n++) {
      if (n % 5 === 4) {
        const s = conn(n % POOL);
        if (s.writableLength < 1 << 20) {
          s.write(defined(streamJunk[n % streamJunk.length], 'stream junk'));
          sentTcp++;
        }
      } else {
        udp.send(defined(datagrams[n % datagrams.length], 'datagram'), port, '127.0.0.1');
        sentUdp++;
      }
    }
    if (now >= end) {
      clearInterval(timer);
      resolve();
    }
  }, 5);
});
const elapsed = (performance.now() - start) / 1000;
udp.close();
for (const s of pool) s?.destroy();
process.send?.({ udp: sentUdp, tcp: sentTcp, seconds: Math.round(elapsed * 10) / 10 }, () => process.exit(0));
