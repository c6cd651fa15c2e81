// What the RTP side of a mass hang-up costs the event loop. N calls are hung up by N SIP requests
// (datagrams, 32 per loop turn, as libuv reads them), each sending its leg's RTCP
// BYE and, once it has left, closing the leg's two sockets (RTP and RTCP), through the batched socket
// layer as in production (MEDIA_IO=native, io_uring where it builds, send thread on), beside a media
// clock ticking every 20 ms. Two ways of flushing the sends queued outside a tick, alternated:
//   microtask  each request's sends leave right after it (before the twenty-second pass)
//   turn       a loop turn's sends leave together at its end (setImmediate)
// Per round: the loop's busy time from the first request to the last socket closed, the process's
// CPU (send thread included), the send batches handed to the addon and the times the loop waited
// for the send thread.
//   npx tsx bench/media/hangup-flush.ts [--calls 100,200,400] [--rounds 3]
// Prints figures; asserts nothing.
import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { MediaClock, type TickSource } from '../../src/media/index.js';
import { NativeRtpIo, nativeRtpIoAddon, type RtpIoAddon } from '../../src/telephony/rtp/native-io.js';

type Mode = 'microtask' | 'turn';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}
const callCounts = arg('calls', '100,200,400').split(',').map(Number);
const rounds = Number(arg('rounds', '3'));
const addon = nativeRtpIoAddon();
let batches = 0;
const countedSendBatch = (...args: Parameters<RtpIoAddon['sendBatch']>): number => {
  batches++;
  return addon.sendBatch(...args);
};
const counting = Object.create(addon, { sendBatch: { value: countedSendBatch } }) as RtpIoAddon;
/** An RTCP BYE with a reason, the size of the one a leg sends. */
const RTCP_BYE = Buffer.alloc(36, 0x81);

/** The clock as the layer sees it: with `ticking` (turn) or without it, taken as always ticking (microtask). */
function clockFor(mode: Mode, clock: MediaClock): TickSource {
  if (mode === 'turn') return clock;
  return { subscribe: (fn) => clock.subscribe(fn), subscribeEarly: (fn) => clock.subscribeEarly(fn) };
}

type NativeSocket = NonNullable<ReturnType<NativeRtpIo['bind']>>;

function bind(io: NativeRtpIo, cold = false): NativeSocket {
  const s = io.bind('127.0.0.1', 0, { cold });
  if (!s) throw new Error('no port');
  return s;
}

async function round(mode: Mode, calls: number): Promise<{ busyMs: number; cpuMs: number; wallMs: number; batches: number; waits: number }> {
  const clock = new MediaClock();
  const io = new NativeRtpIo(counting, clockFor(mode, clock), undefined, addon.ioUringReady(), true);
  const sink = bind(io); // the peers' RTCP port; its packets are read by the ticks and dropped
  const legs = Array.from({ length: calls }, () => ({ rtp: bind(io), rtcp: bind(io, true) }));
  const sip = dgram.createSocket('udp4');
  const peer = dgram.createSocket('udp4');
  await new Promise<void>((r) => sip.bind(0, '127.0.0.1', () => r()));
  await new Promise<void>((r) => peer.bind(0, '127.0.0.1', () => r()));
  // Let the clock settle into its ticks before the requests come.
  await new Promise((r) => setTimeout(r, 200));
  const sinkPort = sink.address().port;
  let closed = 0;
  const allClosed = new Promise<void>((resolve) => {
    for (const { rtp, rtcp } of legs) {
      for (const s of [rtp, rtcp]) s.on('close', () => ++closed === 2 * calls && resolve());
    }
  });
  // The requests go 32 at a time, the next 32 once these are handled: libuv reads up to 32 datagrams
  // per loop turn, and more at once would overflow the socket's default receive buffer.
  const CHUNK = 32;
  let sent = 0;
  let handled = 0;
  const sendChunk = (): void => {
    for (const end = Math.min(calls, sent + CHUNK); sent < end; sent++) {
      const req = Buffer.alloc(400); // a BYE request's size; the first four bytes name the call
      req.writeUInt32BE(sent, 0);
      peer.send(req, sip.address().port, '127.0.0.1');
    }
  };
  sip.on('message', (msg) => {
    const leg = legs[msg.readUInt32BE(0)];
    if (!leg) return;
    leg.rtcp.send(RTCP_BYE, sinkPort, '127.0.0.1', () => {
      leg.rtp.close();
      leg.rtcp.close();
    });
    if (++handled === sent) sendChunk();
  });
  const batches0 = batches;
  const waits0 = addon.sendWaits();
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  sendChunk();
  await allClosed;
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const result = { busyMs: elu.active, cpuMs: (cpu.user + cpu.system) / 1000, wallMs, batches: batches - batches0, waits: addon.sendWaits() - waits0 };
  sink.close();
  sip.close();
  peer.close();
  await new Promise((r) => setTimeout(r, 50));
  clock.stop();
  return result;
}

console.log(`io_uring: ${addon.ioUringReady()}; send thread on; ${rounds} rounds per call count, the two modes alternated`);
for (const calls of callCounts) {
  for (let r = 1; r <= rounds; r++) {
    for (const mode of r % 2 ? (['microtask', 'turn'] as const) : (['turn', 'microtask'] as const)) {
      const x = await round(mode, calls);
      console.log(
        `${calls} calls hung up, ${mode.padEnd(9)} round ${r}: loop busy ${x.busyMs.toFixed(1)} ms (${((x.busyMs * 1000) / calls).toFixed(0)} µs per call), process CPU ${x.cpuMs.toFixed(1)} ms, wall ${x.wallMs.toFixed(1)} ms, ${x.batches} send batches, ${x.waits} waits for the send thread`,
      );
    }
  }
}
