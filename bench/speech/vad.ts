// VAD comparison on the same audio: the energy VAD (media/vad.ts) and Silero (media/vad-silero.ts).
//   false starts: 'start' events on 30 s of noise without speech (white, pink, and a hum with clicks)
//   end-of-speech delay: from the last voiced sample of each utterance to the 'end' event, over
//     8 flite utterances with 1.5 s gaps and a low pink-noise floor; plus missed utterances.
//   start delay: from the first syllable (first sample above -40 dBFS) to the 'start' event.
//   agent modes: the same with the agent modes' shorter hangover (the energy VAD's hangoverMs;
//     Silero's minimum silence as the VAD stage derives it from that hangover).
// Prints figures; asserts nothing. Run: nice -n 10 npx tsx bench/speech/vad.ts
import { existsSync } from 'node:fs';
import os from 'node:os';
import { SileroVoiceActivityDetector, toFrames, VoiceActivityDetector } from '../../src/media/index.js';
import { AGENT_VAD_HANGOVER_MS } from '../../src/sessions/index.js';
import { sileroMinSilenceMs } from '../../src/sessions/processors/vad.js';
import { concatPcm, silence, synthesizeSpeech } from '../../test/helpers/speech-audio.js';

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
  for (let i = 0; i < a.length; i++) out[i] = Math.max(-32768, Math.min(32767, a[i] + (b[i % b.length] ?? 0)));
  return out;
}

type Detector = { process(f: Int16Array): 'start' | 'end' | null };
const agentSilence = sileroMinSilenceMs(AGENT_VAD_HANGOVER_MS);
const makers: Record<string, () => Detector> = {
  energy: () => new VoiceActivityDetector(),
  ...(MODEL ? { silero: () => new SileroVoiceActivityDetector({ model: MODEL }) } : {}),
  [`energy, agent (hangover ${AGENT_VAD_HANGOVER_MS} ms)`]: () => new VoiceActivityDetector({ hangoverMs: AGENT_VAD_HANGOVER_MS }),
  ...(MODEL ? { [`silero, agent (min silence ${agentSilence} ms)`]: () => new SileroVoiceActivityDetector({ model: MODEL, minSilenceMs: agentSilence }) } : {}),
};

function run(d: Detector, pcm: Int16Array): Array<{ kind: 'start' | 'end'; ms: number; cpuMs: number }> {
  const events: Array<{ kind: 'start' | 'end'; ms: number; cpuMs: number }> = [];
  toFrames(pcm).forEach((f, i) => {
    const t = d.process(f);
    if (t) events.push({ kind: t, ms: (i + 1) * 20, cpuMs: 0 });
  });
  return events;
}

function lastVoicedMs(pcm: Int16Array): number {
  for (let i = pcm.length - 1; i >= 0; i--) if (Math.abs(pcm[i]) > 300) return (i * 1000) / 8000;
  return 0;
}

async function main(): Promise<void> {
  if (!MODEL) console.log('silero_vad.onnx not found (run scripts/fetch-vad-model.sh): energy VAD only');
  console.log(
    `VAD comparison (shared 2-core machine, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; figures vary between runs)\n`,
  );
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
  for (const [name, make] of Object.entries(makers)) {
    const falseStarts = Object.entries(noises).map(([n, pcm]) => `${n}: ${run(make(), pcm).filter((e) => e.kind === 'start').length}`);
    const c0 = performance.now();
    const detector = make();
    const openMs = performance.now() - c0;
    const t0 = process.cpuUsage();
    const events = run(detector, speech);
    const cpu = process.cpuUsage(t0);
    const cpuPerAudioS = (cpu.user + cpu.system) / 1000 / ((speech.length / 8000) * 1000);
    const endEvents = events.filter((e) => e.kind === 'end').map((e) => e.ms);
    const delays = ends.map((end) => endEvents.find((e) => e >= end - 200)).map((e, i) => (e === undefined ? null : e - ends[i]));
    const found = delays.filter((d): d is number => d !== null).sort((a, b) => a - b);
    const startEvents = events.filter((e) => e.kind === 'start').map((e) => e.ms);
    const starts = startEvents.length;
    // Start delay: the 'start' event after the first syllable (the preroll then reaches back before it).
    const startDelays = onsets
      .map((on) => startEvents.find((e) => e >= on))
      .map((e, i) => (e === undefined ? null : e - (onsets[i] ?? 0)))
      .filter((d): d is number => d !== null)
      .sort((a, b) => a - b);
    console.log(`${name}\n  false starts on noise — ${falseStarts.join(', ')}`);
    console.log(
      `  ${SENTENCES.length} utterances: ${starts} starts, ${found.length} ends found; start delay ms: median ${startDelays[Math.floor(startDelays.length / 2)]?.toFixed(0) ?? '-'}, max ${startDelays.at(-1)?.toFixed(0) ?? '-'}; end-of-speech delay ms: median ${found[Math.floor(found.length / 2)] ?? '-'}, max ${found.at(-1) ?? '-'}; CPU ${(cpuPerAudioS * 100).toFixed(2)} % of a core; detector created in ${openMs.toFixed(1)} ms`,
    );
  }
}

void main();
