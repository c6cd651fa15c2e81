// What sending a leg's 20 ms G.711 frame costs the event loop through the batched socket layer
// (MEDIA_IO=native, io_uring where it builds, send thread on), two ways, alternated in one process:
//   js  the header and the A-law payload written into the batch slot by JavaScript (before this bench)
//   c   the header and the PCM samples copied into the slot; the addon encodes on its send thread
// Per round: N sockets each send one packet per tick for T ticks, the ticks fired as fast as the CPU
// allows (the figure is CPU per packet, not real time). The packets go to one socket nobody reads:
// loopback drops them once its buffer is full, so no reader's CPU is counted. CPU per thread from
// /proc (Linux, 10 ms resolution, hence rounds of a second or more).
//   npx tsx bench/media/encode-cost.ts [--sockets 400] [--ticks 2000] [--rounds 4]
// Prints figures; asserts nothing.
import { alawEncodeInto } from '../../src/media/g711.js';
import type { TickListener, TickSource } from '../../src/media/index.js';
import { NativeRtpIo, nativeRtpIoAddon } from '../../src/telephony/rtp/native-io.js';
import { writeRtpHeader, RTP_HEADER_BYTES } from '../../src/telephony/rtp/packet.js';
import { mainAndOtherThreadsCpuUs } from '../thread-cpu.js';
import { numberArg, median } from '../bench-args.js';

type Mode = 'js' | 'c';

const SOCKETS = numberArg('sockets', 400);
const TICKS = numberArg('ticks', 2000);
const ROUNDS = numberArg('rounds', 4);
const SAMPLES = 160;
const PCMA = 8;

/** A clock that ticks when told to: the layer flushes each tick's sends in a microtask after it. */
class HandClock implements TickSource {
  private early: TickListener | null = null;
  subscribe(): () => void {
    return () => {};
  }
  subscribeEarly(fn: TickListener): () => void {
    this.early = fn;
    return () => (this.early = null);
  }
  fire(n: number): void {
    this.early?.(n);
  }
}

const addon = nativeRtpIoAddon();
// Speech-like samples, so the table reads are not all of one entry.
const frame = Int16Array.from({ length: SAMPLES }, (_, i) => Math.round(8000 * Math.sin(i / 3) + 500 * Math.sin(i * 1.7)));

async function round(mode: Mode): Promise<{ mainUs: number; otherUs: number }> {
  const clock = new HandClock();
  const io = new NativeRtpIo(addon, clock, undefined, addon.ioUringReady(), true);
  const sink = addon.open(0x7f000001, 0);
  const sinkPort = addon.port(sink);
  const sockets = Array.from({ length: SOCKETS }, () => {
    const s = io.bind('127.0.0.1', 0);
    if (!s) throw new Error('no port');
    return s;
  });
  const header = { marker: false, payloadType: PCMA, sequence: 0, timestamp: 0, ssrc: 0x1234 };
  const before = mainAndOtherThreadsCpuUs();
  for (let t = 0; t < TICKS; t++) {
    clock.fire(t);
    header.sequence = t & 0xffff;
    header.timestamp = (t * SAMPLES) >>> 0;
    for (const s of sockets) {
      if (mode === 'js') {
        const at = io.reserveSend(s.fd, RTP_HEADER_BYTES + SAMPLES, sinkPort, 0x7f000001);
        writeRtpHeader(io.sendData, header, at);
        alawEncodeInto(frame, io.sendData, at + RTP_HEADER_BYTES);
      } else {
        const at = s.reservePcmSend(SAMPLES, PCMA, sinkPort, '127.0.0.1');
        writeRtpHeader(io.sendData, header, at);
        io.sendPcm.set(frame, (at + RTP_HEADER_BYTES) >> 1);
      }
    }
    await Promise.resolve(); // the tick's flush (a microtask), as after a media tick
  }
  while (addon.sendsQueued() > 0) await new Promise((r) => setImmediate(r));
  const after = mainAndOtherThreadsCpuUs();
  for (const s of sockets) s.close();
  addon.close(sink);
  const packets = SOCKETS * TICKS;
  return { mainUs: (after.main - before.main) / packets, otherUs: (after.others - before.others) / packets };
}

const results: Record<Mode, { mainUs: number; otherUs: number }[]> = { js: [], c: [] };
for (let r = 1; r <= ROUNDS; r++) {
  for (const mode of (r % 2 ? ['js', 'c'] : ['c', 'js']) as Mode[]) {
    const f = await round(mode);
    results[mode].push(f);
    console.log(
      `round ${r} ${mode}: main thread ${f.mainUs.toFixed(2)} µs per packet, other threads ${f.otherUs.toFixed(2)} µs (${SOCKETS} sockets × ${TICKS} ticks)`,
    );
  }
}
for (const mode of ['js', 'c'] as Mode[]) {
  const rs = results[mode];
  console.log(
    `median ${mode}: main thread ${median(rs.map((f) => f.mainUs)).toFixed(2)} µs per packet, other threads ${median(rs.map((f) => f.otherUs)).toFixed(2)} µs`,
  );
}
console.log(JSON.stringify({ bench: 'media_encode_cost', sockets: SOCKETS, ticks: TICKS, results }));
