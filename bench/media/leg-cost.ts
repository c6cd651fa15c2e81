// CPU cost of the RTP path per leg and 20 ms tick, in one process, free of the event loop's share of
// a busy host: what the gateway pays per bridged leg for one packet in (receive, latch, decode,
// jitter buffer), one frame out of the jitter buffer handed to the other leg, and one packet out
// (encode, send). Legs are bridged in pairs as a session bridges two phone legs.
//   npx tsx bench/media/leg-cost.ts [--legs 200] [--ticks 1500] [--rounds 3] [--workers 0] [--native 0] [--session 0]
// --session 1 bridges each pair through a real LiveSession (assistive translation, engines off: the
// gateway's RTP→RTP path, pipeline stages and output pacer included) instead of handing frames across.
// --native 1 reads and writes the gateway side's RTP sockets through the batched addon (MEDIA_IO=native).
// --workers N puts the gateway side's RTP sockets in N worker threads (MEDIA_WORKERS); the figure is then
// split into the main thread's share and the rest (worker threads, libuv and V8 helpers), read per thread
// from /proc/self/task (Linux; 10 ms resolution, so rounds of several seconds).
// The ticks are driven as fast as the CPU allows (not in real time): the figure is CPU time per
// leg-tick (user + system, this process, the phones' side included, the same before and after a
// change), so a 2-core host shared with other work gives the same figure as a quiet one, within noise.
// Prints figures; asserts nothing.
import dgram from 'node:dgram';
import { RtpEndpoint } from '../../src/telephony/rtp/endpoint.js';
import { serializeRtp } from '../../src/telephony/rtp/packet.js';
import { alawEncode } from '../../src/media/g711.js';
import type { TickListener, TickSource } from '../../src/media/index.js';
import { defined } from '../defined.js';
import { mainAndOtherThreadsCpuUs } from '../thread-cpu.js';
import { LiveSession } from '../../src/sessions/live-session.js';
import { buildEngines } from '../../src/speech/index.js';
import { numberArg } from '../bench-args.js';

const LEGS = numberArg('legs', 200) & ~1;
const TICKS = numberArg('ticks', 1500);
const ROUNDS = numberArg('rounds', 3);
const WORKERS = numberArg('workers', 0);
const NATIVE = numberArg('native', 0) === 1;
const SESSION = numberArg('session', 0) === 1;

function join(phase: Set<TickListener>, fn: TickListener): () => void {
  phase.add(fn);
  return () => phase.delete(fn);
}

/** The media clock, fired by hand: reading (MEDIA_IO=native), playout, pacing, then sending, as the process clock does. */
class DrivenClock implements TickSource {
  private readonly read = new Set<TickListener>();
  private readonly play = new Set<TickListener>();
  private readonly pace = new Set<TickListener>();
  private readonly send = new Set<TickListener>();
  private n = 0;
  subscribeEarly(fn: TickListener): () => void {
    return join(this.read, fn);
  }
  subscribe(fn: TickListener): () => void {
    return join(this.play, fn);
  }
  subscribePace(fn: TickListener): () => void {
    return join(this.pace, fn);
  }
  subscribeLate(fn: TickListener): () => void {
    return join(this.send, fn);
  }
  fire(): void {
    this.n++;
    for (const phase of [this.read, this.play, this.pace, this.send]) for (const fn of phase) fn(this.n);
  }
}

const FRAME = 160;
const tone = new Int16Array(FRAME).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
const PAYLOAD = Buffer.from(alawEncode(tone));

async function bindPhone(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

async function round(): Promise<{
  usPerLegTick: number;
  mainUsPerLegTick: number;
  othersUsPerLegTick: number;
  sysShare: number;
  received: number;
  sent: number;
  phoneGot: number;
}> {
  const clock = new DrivenClock();
  const eps: RtpEndpoint[] = [];
  const phones: dgram.Socket[] = [];
  let phoneGot = 0;
  for (let i = 0; i < LEGS; i++) {
    const ep = await RtpEndpoint.open({
      bindAddress: '127.0.0.1',
      portMin: 30000,
      portMax: 39998,
      timeoutMs: 600_000,
      clock,
      jitter: { targetFrames: 2, adaptive: false },
      socketWorkers: WORKERS,
      nativeIo: NATIVE,
    });
    const phone = await bindPhone();
    phone.on('message', () => phoneGot++);
    ep.configure({ address: '127.0.0.1', port: phone.address().port, payloadType: 8, dtmfPayloadType: 101, send: true, expectReceive: true });
    eps.push(ep);
    phones.push(phone);
  }
  // Bridge in pairs: what one leg plays out, the other sends (through a session with --session 1).
  const sessions: LiveSession[] = [];
  for (let i = 0; i < LEGS; i += 2) {
    const a = defined(eps[i], 'leg');
    const b = defined(eps[i + 1], 'leg');
    if (SESSION) {
      const s = bridgeSession(i, clock, a, b);
      sessions.push(s);
      a.onFrames((f) => s.pushAudio('customer', f));
      b.onFrames((f) => s.pushAudio('agent', f));
    } else {
      a.onFrames((f) => b.playFrame(f));
      b.onFrames((f) => a.playFrame(f));
    }
  }
  const tick = async (t: number): Promise<void> => {
    for (let i = 0; i < LEGS; i++) {
      defined(phones[i], 'phone').send(
        serializeRtp({ marker: t === 0, payloadType: 8, sequence: t & 0xffff, timestamp: (t * FRAME) >>> 0, ssrc: 1000 + i, payload: PAYLOAD }),
        defined(eps[i], 'leg').port,
        '127.0.0.1',
      );
    }
    // Let the poll phase read what arrived (both directions), then the clock ticks. With socket workers
    // the packets come through a worker's batch: wait until every leg has its packet (bounded).
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    for (let spin = 0; WORKERS > 0 && spin < 200 && eps.reduce((a, e) => a + e.stats.packetsIn, 0) < (t + 1) * LEGS; spin++) {
      await new Promise((r) => setTimeout(r, 0));
    }
    clock.fire();
  };
  for (let t = 0; t < 100; t++) await tick(t); // warm-up: latching, priming, JIT
  const received0 = eps.reduce((a, e) => a + e.stats.packetsIn, 0);
  const sent0 = eps.reduce((a, e) => a + e.stats.packetsOut, 0);
  const phoneGot0 = phoneGot;
  const cpu0 = process.cpuUsage();
  const thr0 = mainAndOtherThreadsCpuUs();
  for (let t = 100; t < 100 + TICKS; t++) await tick(t);
  const cpu = process.cpuUsage(cpu0);
  const thr1 = mainAndOtherThreadsCpuUs();
  const received = eps.reduce((a, e) => a + e.stats.packetsIn, 0) - received0;
  const sent = eps.reduce((a, e) => a + e.stats.packetsOut, 0) - sent0;
  sessions.forEach((s) => s.close('bench_done'));
  eps.forEach((e) => e.close());
  phones.forEach((p) => p.close());
  return {
    usPerLegTick: (cpu.user + cpu.system) / (LEGS * TICKS),
    mainUsPerLegTick: (thr1.main - thr0.main) / (LEGS * TICKS),
    othersUsPerLegTick: (thr1.others - thr0.others) / (LEGS * TICKS),
    sysShare: cpu.system / (cpu.user + cpu.system),
    received,
    sent,
    phoneGot: phoneGot - phoneGot0,
  };
}

/** An assistive session, engines off, with leg `a` as the customer and `b` as the agent (hooks do nothing). */
function bridgeSession(i: number, clock: TickSource, a: RtpEndpoint, b: RtpEndpoint): LiveSession {
  const s = new LiveSession({
    id: `bench-${i}`,
    orgId: 'bench',
    mode: 'assistive_translation',
    sourceLanguage: 'en',
    targetLanguage: 'en',
    voice: {},
    engines: buildEngines(null, null, null),
    defaultLanguage: 'en',
    clock,
    hooks: { firstAudio: () => {}, activity: () => {}, storeTurn: async () => {} },
    awaitsLeg: true,
  });
  const leg = (party: 'customer' | 'agent', ep: RtpEndpoint) => ({
    party,
    kind: 'sip' as const,
    playFrame: (f: Int16Array) => ep.playFrame(f),
    close: () => {},
  });
  s.attachLeg(leg('customer', a));
  s.attachLeg(leg('agent', b));
  return s;
}

const results = [];
for (let r = 0; r < ROUNDS; r++) {
  const x = await round();
  results.push(x);
  console.log(
    `round ${r + 1}: ${x.usPerLegTick.toFixed(2)} µs CPU per leg-tick (main thread ${x.mainUsPerLegTick.toFixed(2)}, other threads ${x.othersUsPerLegTick.toFixed(2)}), ${Math.round(x.sysShare * 100)} % of it in the kernel (${LEGS} legs × ${TICKS} ticks, socket workers ${WORKERS}, native ${NATIVE}, session ${SESSION}; packets in ${x.received}, out ${x.sent}, at the phones ${x.phoneGot})`,
  );
}
const sorted = results.map((x) => x.usPerLegTick).sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
const mains = results.map((x) => x.mainUsPerLegTick).sort((a, b) => a - b);
const mainMedian = mains[Math.floor(mains.length / 2)] ?? NaN;
console.log(
  `median ${median.toFixed(2)} µs CPU per leg-tick → ${((median * 50) / 1000).toFixed(2)} ms CPU per leg-second, ${((median * 100) / 1000).toFixed(2)} ms per bridged call-second; main thread median ${mainMedian.toFixed(2)} µs per leg-tick`,
);
console.log(
  JSON.stringify({
    bench: 'media_leg_cost',
    legs: LEGS,
    ticks: TICKS,
    workers: WORKERS,
    native: NATIVE,
    session: SESSION,
    usPerLegTick: sorted,
    mainUsPerLegTick: mains,
  }),
);
process.exit(0);
