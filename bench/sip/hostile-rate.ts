// How fast the SIP front refuses hostile input, and what it costs the event loop: one process runs
// the user agent, a sender blasts a mix of hostile datagrams (65 KB "\r\n " runs, bad
// Content-Length, SIP/7.0, garbage) for a few seconds. Prints figures; asserts nothing.
// The same input while 100 bridged calls are live, from another process: hostile-live.ts.
import dgram from 'node:dgram';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { UserAgent } from '../../src/telephony/sip/user-agent.js';
import { RefusalCounter } from '../../src/telephony/sip/refusals.js';
import { defined } from '../defined.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const quiet = { debug() {}, info() {}, warn() {} };
const refusals = new RefusalCounter(quiet);
const ua = await UserAgent.start(
  { host: '127.0.0.1', port: 0, transports: ['udp'], advertisedAddress: '127.0.0.1', onRefused: (f, r) => refusals.record(f, r) },
  { onInvite: (inv) => inv.reject(404, 'Not Found') },
);
const head = (extra: string) =>
  `OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKb\r\nFrom: <sip:a@b>;tag=1\r\nTo: <sip:x@127.0.0.1>\r\nCall-ID: bench\r\nCSeq: 1 OPTIONS\r\n${extra}\r\n`;
const payloads = [
  Buffer.from('\r\n '.repeat(21_666), 'latin1'),
  Buffer.from(head('Content-Length: abc\r\n')),
  Buffer.from(head('Content-Length: 0\r\n').replace('SIP/2.0\r\n', 'SIP/7.0\r\n')),
  Buffer.alloc(1200, 0x41),
];
const s = dgram.createSocket('udp4');
const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
let sent = 0;
const end = Date.now() + seconds * 1000;
while (Date.now() < end) {
  for (let i = 0; i < 50; i++) s.send(defined(payloads[sent++ % payloads.length], 'payload'), ua.port, '127.0.0.1');
  await new Promise((r) => setImmediate(r));
}
await new Promise((r) => setTimeout(r, 500));
h.disable();
const refused = Object.values(refusals.counts).reduce((a, b) => a + b, 0);
console.log(
  JSON.stringify(
    {
      seconds,
      sent,
      refused,
      refusedPerSecond: Math.round(refused / seconds),
      byFault: refusals.counts,
      loopDelayMs: { p50: +(h.percentile(50) / 1e6).toFixed(1), p99: +(h.percentile(99) / 1e6).toFixed(1), max: +(h.max / 1e6).toFixed(1) },
    },
    null,
    2,
  ),
);
s.close();
ua.close();
setTimeout(() => process.exit(0), 200);
