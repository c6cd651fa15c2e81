// VAD comparison on the same audio: the energy VAD (media/vad.ts) and Silero (media/vad-silero.ts,
// one shared model in a worker thread), and what Silero costs.
//   false starts: 'start' events on 10 s of noise without speech (white, pink, a hum with clicks,
//     and noise that begins mid-call)
//   end-of-speech delay: from the last voiced sample of each utterance to the 'end' decision, over
//     8 flite utterances with 1.5 s gaps and a low pink-noise floor; plus missed utterances.
//   start delay: from the first syllable (first sample above -40 dBFS) to the 'start' decision.
//   Silero's decisions are placed at the end of the window that made them (atMs): the answer lag
//   (batching hold + worker round trip) is measured apart, on a live-paced stream.
//   agent modes: the same with the agent modes' shorter hangover.
//   cost: process CPU (main thread + worker) per 32 ms window, one stream alone (one window per
//     inference call) and 100 streams fed together (batched); event-loop delay while the model
//     loads and while 100 streams run; time to create a detector; heap per stream.
// Prints figures; asserts nothing. Run: nice -n 10 npx tsx bench/speech/vad.ts
import { existsSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { SileroModel, SileroVoiceActivityDetector, toFrames, VoiceActivityDetector } from '../../src/media/index.js';
import { AGENT_VAD_HANGOVER_MS } from '../../src/sessions/index.js';
import { sileroMinSilenceMs } from '../../src/sessions/processors/vad.js';
import { concatPcm, silence, synthesizeSpeech } from '../../test/helpers/speech-audio.js';
import { defined } from '../defined.js';

const MODEL = [
  '.voxbridge/models/silero-vad/silero_vad.onnx',
  '../shared/models/silero-vad/silero_vad.onnx',
  '/work/shared/models/silero-vad/silero_vad.onnx',
].find(existsSync);
const SENTENCES = [
  'good morning',
  'i need help with my order',
  'i would like to check my account balance',
  'thank you very much',
  'please transfer me to billing',
  'my name is john smith',
  'what time is it',
  'no thank you',
];

let seed = 42;
const rand = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const gauss = (): number => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());

function noise(seconds: number, kind: 'white' | 'pink' | 'hum', dbfs: number): Int16Array {
  const n = seconds * 8000;
  const out = new Int16Array(n);
  const amp = 32768 * 10 ** (dbfs / 20);
  let b0 = 0,
    b1 = 0,
    b2 = 0;
  for (let i = 0; i < n; i++) {
    let v: number;
    if (kind === 'white') v = gauss();
    else if (kind === 'pink') {
      const w = gauss();
      b0 = 0.99765 * b0 + w * 0.099046;
      b1 = 0.963 * b1 + w * 0.2965164;
      b2 = 0.57 * b2 + w * 1.0526913;
      v = (b0 + b1 + b2 + w * 0.1848) / 3;
    } else v = Math.sin((2 * Math.PI * 60 * i) / 8000) * 1.4 + (i % 4000 < 40 ? gauss() * 6 : 0); // hum + clicks
    out[i] = Math.max(-32768, Math.min(32767, Math.round(v * amp)));
  }
  return out;
}

function mix(a: Int16Array, b: Int16Array): Int16Array {
  const out = new Int16Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = Math.max(-32768, Math.min(32767, (a[i] ?? 0) + (b[i % b.length] ?? 0)));
  return out;
}

type Event = { kind: 'start' | 'end'; ms: number };
type Runner = (pcm: Int16Array) => Promise<Event[]>;

const energy =
  (hangoverMs?: number): Runner =>
  async (pcm) => {
    const d = new VoiceActivityDetector(hangoverMs === undefined ? {} : { hangoverMs });
    const events: Event[] = [];
    toFrames(pcm).forEach((f, i) => {
      const t = d.process(f);
      if (t) events.push({ kind: t, ms: (i + 1) * 20 });
    });
    return events;
  };

const silero =
  (model: string, minSilenceMs?: number): Runner =>
  async (pcm) => {
    const d = new SileroVoiceActivityDetector({ model, ...(minSilenceMs === undefined ? {} : { minSilenceMs }) });
    const events: Event[] = [];
    d.on('start', (e) => events.push({ kind: 'start', ms: e.atMs }));
    d.on('end', (e) => events.push({ kind: 'end', ms: e.atMs }));
    for (const f of toFrames(pcm)) d.process(f);
    await d.settled();
    d.close();
    return events;
  };

function lastVoicedMs(pcm: Int16Array): number {
  for (let i = pcm.length - 1; i >= 0; i--) if (Math.abs(pcm[i] ?? 0) > 300) return (i * 1000) / 8000;
  return 0;
}

const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const median = (xs: number[]): number | undefined => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function detection(): Promise<void> {
  // Steady noise from the first frame is learned by the energy VAD's calibration; noise that
  // begins mid-call (a fan, traffic, a door) is the hard case.
  const noises = {
    'white -40 dBFS': noise(10, 'white', -40),
    'pink -30 dBFS': noise(10, 'pink', -30),
    'hum+clicks -30 dBFS': noise(10, 'hum', -30),
    'silence then pink -25 dBFS': concatPcm(silence(2000), noise(8, 'pink', -25)),
    'silence then white bursts -30 dBFS': concatPcm(
      silence(2000),
      noise(1, 'white', -30),
      silence(1000),
      noise(1, 'white', -30),
      silence(1000),
      noise(1, 'white', -30),
    ),
  };
  const utterances = await Promise.all(SENTENCES.map((s) => synthesizeSpeech(s)));
  const gap = silence(1500);
  const parts: Int16Array[] = [gap];
  const ends: number[] = [];
  const onsets: number[] = [];
  let ms = 1500;
  for (const u of utterances) {
    ends.push(ms + lastVoicedMs(u));
    onsets.push(ms + (u.findIndex((v) => Math.abs(v) > 300) * 1000) / 8000);
    ms += (u.length * 1000) / 8000 + 1500;
    parts.push(u, gap);
  }
  const speech = mix(concatPcm(...parts), noise(10, 'pink', -45));
  const agentSilence = sileroMinSilenceMs(AGENT_VAD_HANGOVER_MS);
  const runners: Record<string, Runner> = {
    energy: energy(),
    ...(MODEL ? { silero: silero(MODEL) } : {}),
    [`energy, agent (hangover ${AGENT_VAD_HANGOVER_MS} ms)`]: energy(AGENT_VAD_HANGOVER_MS),
    ...(MODEL ? { [`silero, agent (min silence ${agentSilence} ms)`]: silero(MODEL, agentSilence) } : {}),
  };
  for (const [name, run] of Object.entries(runners)) {
    const falseStarts: string[] = [];
    for (const [n, pcm] of Object.entries(noises)) falseStarts.push(`${n}: ${(await run(pcm)).filter((e) => e.kind === 'start').length}`);
    const events = await run(speech);
    const endEvents = events.filter((e) => e.kind === 'end').map((e) => e.ms);
    const found = ends
      .map((end) => endEvents.find((e) => e >= end - 200))
      .map((e, i) => (e === undefined ? null : e - (ends[i] ?? 0)))
      .filter((d): d is number => d !== null)
      .sort((a, b) => a - b);
    const startEvents = events.filter((e) => e.kind === 'start').map((e) => e.ms);
    const startDelays = onsets
      .map((on) => startEvents.find((e) => e >= on))
      .map((e, i) => (e === undefined ? null : e - (onsets[i] ?? 0)))
      .filter((d): d is number => d !== null)
      .sort((a, b) => a - b);
    console.log(`${name}\n  false starts on noise — ${falseStarts.join(', ')}`);
    console.log(
      `  ${SENTENCES.length} utterances: ${startEvents.length} starts, ${found.length} ends found; start delay ms: median ${median(startDelays)?.toFixed(0) ?? '-'}, max ${startDelays.at(-1)?.toFixed(0) ?? '-'}; end-of-speech delay ms: median ${median(found)?.toFixed(0) ?? '-'}, max ${found.at(-1)?.toFixed(0) ?? '-'}`,
    );
  }
}

/**
 * Process CPU (main thread + worker) per 32 ms window for `streams` party streams fed live (a frame
 * each 20 ms, the default batching hold), less the same paced loop without a VAD.
 */
async function cpuPerWindow(model: string, streams: number, seconds: number, pcm: Int16Array): Promise<{ us: number; perCall: number }> {
  const frames = toFrames(pcm);
  const paced = async (feed: (f: Int16Array) => void): Promise<number> => {
    const t0 = process.cpuUsage();
    const start = performance.now();
    for (let i = 0; i < (seconds * 1000) / 20; i++) {
      const f = defined(frames[i % frames.length], 'frame');
      feed(f);
      await new Promise((r) => setTimeout(r, Math.max(0, start + (i + 1) * 20 - performance.now())));
    }
    const cpu = process.cpuUsage(t0);
    return cpu.user + cpu.system;
  };
  const baseline = await paced(() => undefined);
  const ds = Array.from({ length: streams }, () => new SileroVoiceActivityDetector({ model }));
  const m = SileroModel.shared(model);
  const before = { ...m.stats };
  const used = await paced((f) => {
    for (const d of ds) d.process(f);
  });
  await ds[0]?.settled();
  const windows = m.stats.windows - before.windows;
  const runs = m.stats.runs - before.runs;
  for (const d of ds) d.close();
  return { us: (used - baseline) / windows, perCall: windows / runs };
}

async function cost(model: string): Promise<void> {
  const speech = concatPcm(silence(500), await synthesizeSpeech('i would like to check my account balance'), silence(500));
  // Creating the first detector starts the worker and loads the model there: the loop keeps turning.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const elu0 = performance.eventLoopUtilization();
  const rss0 = process.memoryUsage().rss;
  const c0 = performance.now();
  const first = new SileroVoiceActivityDetector({ model });
  const createFirst = performance.now() - c0;
  for (const f of toFrames(silence(40))) first.process(f);
  await first.settled(); // the model is loaded and has answered
  const readyMs = performance.now() - c0;
  const elu = performance.eventLoopUtilization(elu0);
  loop.disable();
  const rss1 = process.memoryUsage().rss;
  console.log(
    `\nSilero model: first detector created in ${createFirst.toFixed(1)} ms (starts the worker); first answer after ${readyMs.toFixed(0)} ms (the model loads in the worker); main thread busy ${elu.active.toFixed(0)} ms of those, event-loop delay max ${(loop.max / 1e6).toFixed(1)} ms; RSS +${((rss1 - rss0) / 1e6).toFixed(0)} MB (worker, runtime, model: once per process)`,
  );
  first.close();
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    new SileroVoiceActivityDetector({ model }).close();
    times.push(performance.now() - t);
  }
  console.log(`  a further detector: created in median ${(median(times)! * 1000).toFixed(0)} µs (no model load)`);

  const pct = (us: number): string => ((us / 32_000) * 100).toFixed(2);
  for (const streams of [1, 2, 20, 100]) {
    const loop2 = monitorEventLoopDelay({ resolution: 1 });
    loop2.enable();
    const r = await cpuPerWindow(model, streams, streams >= 20 ? 5 : 10, speech);
    loop2.disable();
    console.log(
      `  ${String(streams).padStart(3)} live stream(s): CPU ${r.us.toFixed(0)} µs per 32 ms window (${r.perCall.toFixed(1)} windows per inference call) = ${pct(r.us)} % of a core per party stream; event-loop delay p99 ${(loop2.percentile(99) / 1e6).toFixed(1)} ms`,
    );
  }

  const heap0 = (globalThis.gc?.(), process.memoryUsage().heapUsed);
  const many = Array.from({ length: 1000 }, () => new SileroVoiceActivityDetector({ model }));
  for (const f of toFrames(silence(400))) for (const d of many) d.process(f.slice()); // each stream its own frames
  await many[0]?.settled();
  const heap1 = (globalThis.gc?.(), process.memoryUsage().heapUsed);
  console.log(
    `  memory per stream: ~${((heap1 - heap0) / 1000 / 1024).toFixed(1)} KB of main-thread heap (its preroll ring, silence fed) + 1 KB of model state in the worker`,
  );
  for (const d of many) d.close();

  // Answer lag on a live-paced stream: from a window's last frame to its answer.
  const d = new SileroVoiceActivityDetector({ model });
  const lags: number[] = [];
  const frames = toFrames(concatPcm(silence(500), speech));
  for (let i = 0; i < frames.length; i++) {
    d.process(defined(frames[i], 'frame'));
    if ((i + 1) % 8 === 0) {
      const sentAt = performance.now(); // every 8 frames end a window exactly (8 × 160 = 5 × 256)
      await d.settled();
      lags.push(performance.now() - sentAt);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  d.close();
  console.log(
    `  answer lag, live-paced (hold ≤ ${SileroModel.shared(model).batchMs} ms + worker): median ${median(lags)?.toFixed(1)} ms, max ${Math.max(...lags).toFixed(1)} ms`,
  );
}

async function main(): Promise<void> {
  console.log(`VAD comparison (shared 2-core machine, load average ${load()}; figures vary between runs)\n`);
  if (!MODEL) console.log('silero_vad.onnx not found (run scripts/fetch-vad-model.sh): energy VAD only');
  if (MODEL) await cost(MODEL);
  console.log('');
  await detection();
  console.log(`\nload average at the end: ${load()}`);
}

void main();
